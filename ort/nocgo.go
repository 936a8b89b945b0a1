//go:build !cgo

package ort

import (
	"fmt"

	"github.com/inlay-dev/inlay/graph"
)

// Runtime is the loaded ONNX Runtime library; without cgo there is none.
type Runtime struct {
	path    string
	version string
}

// Open reports ErrNoCgo: a build without cgo cannot load ONNX Runtime.
func Open(libPath string) (*Runtime, error) {
	return nil, fmt.Errorf("ort: open %s: %w", libPath, ErrNoCgo)
}

// Version is the ONNX Runtime library's version string.
func (r *Runtime) Version() string { return r.version }

// Path is the library path the runtime was opened from.
func (r *Runtime) Path() string { return r.path }

// Session is one loaded model; without cgo there is none.
type Session struct{}

// NewSession reports ErrNoCgo.
func (r *Runtime) NewSession(model []byte, inputNames, outputNames []string, opt SessionOptions) (*Session, error) {
	return nil, fmt.Errorf("ort: new session: %w", ErrNoCgo)
}

// Run reports ErrNoCgo.
func (s *Session) Run(inputs []*graph.Data) ([]*graph.Data, error) {
	return nil, fmt.Errorf("ort: run: %w", ErrNoCgo)
}

// Close does nothing.
func (s *Session) Close() error { return nil }
