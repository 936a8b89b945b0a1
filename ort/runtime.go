//go:build cgo

package ort

import (
	"fmt"
	"sync"

	onnxruntime "github.com/yalue/onnxruntime_go"

	"github.com/inlay-dev/inlay/internal/assets"
)

// Runtime is the loaded ONNX Runtime library with its environment.
type Runtime struct {
	path    string
	version string
}

// process holds the one ONNX Runtime environment of the process (see the
// package documentation); the state itself lives inside onnxruntime_go.
var process struct {
	mu      sync.Mutex
	runtime *Runtime
}

// Open loads the ONNX Runtime shared library at libPath and creates the
// process's environment. It does so once per process: later calls with the
// same path return the same runtime, a call with another path is an error.
// A failed Open may be retried (with any path).
func Open(libPath string) (*Runtime, error) {
	process.mu.Lock()
	defer process.mu.Unlock()
	if r := process.runtime; r != nil {
		if r.path != libPath {
			return nil, fmt.Errorf("ort: open %s: ONNX Runtime is already loaded from %s in this process", libPath, r.path)
		}
		return r, nil
	}
	if libPath == "" {
		return nil, fmt.Errorf("ort: open: empty library path")
	}
	if err := assets.CheckFetched(libPath); err != nil {
		// A fresh machine: say what is missing, not what the loader says.
		return nil, fmt.Errorf("ort: ONNX Runtime library %w", err)
	}
	onnxruntime.SetSharedLibraryPath(libPath)
	if err := onnxruntime.InitializeEnvironment(onnxruntime.WithLogLevelError()); err != nil {
		return nil, fmt.Errorf("ort: open %s: %w", libPath, err)
	}
	process.runtime = &Runtime{path: libPath, version: onnxruntime.GetVersion()}
	return process.runtime, nil
}

// Version is the ONNX Runtime library's version string, e.g. "1.30.0".
func (r *Runtime) Version() string { return r.version }

// Path is the library path the runtime was opened from.
func (r *Runtime) Path() string { return r.path }
