package hw

import (
	"embed"
	"fmt"
	"strings"

	"github.com/inlay-dev/inlay/internal/presetfs"
)

//go:embed presets/*.yaml
var presetFS embed.FS

var presets = presetfs.Dir{FS: presetFS, Dir: "presets", Pkg: "cluster/hw", What: "cluster"}

// Presets returns the names of the embedded clusters, sorted.
func Presets() []string { return presets.Names() }

// PresetSource returns a preset's YAML, source citations included.
func PresetSource(name string) ([]byte, error) { return presets.Source(name) }

// Preset returns a fresh copy of an embedded cluster.
func Preset(name string) (*Platform, error) {
	data, err := PresetSource(name)
	if err != nil {
		return nil, err
	}
	return Parse("preset "+name, data)
}

// Resolve returns the preset called nameOrPath, or else loads the file.
func Resolve(nameOrPath string) (*Platform, error) {
	if presets.Has(nameOrPath) {
		return Preset(nameOrPath)
	}
	if strings.HasSuffix(nameOrPath, ".yaml") || strings.HasSuffix(nameOrPath, ".yml") || strings.ContainsRune(nameOrPath, '/') {
		return Load(nameOrPath)
	}
	return nil, fmt.Errorf("cluster/hw: unknown cluster %q (presets: %s; or a YAML file)", nameOrPath, strings.Join(Presets(), ", "))
}
