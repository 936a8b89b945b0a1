package hw

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed presets/*.yaml
var presetFS embed.FS

func sortStrings(s []string) { sort.Strings(s) }

// Presets returns the names of the embedded clusters, sorted.
func Presets() []string {
	entries, _ := presetFS.ReadDir("presets")
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// PresetSource returns a preset's YAML, source citations included.
func PresetSource(name string) ([]byte, error) {
	data, err := presetFS.ReadFile("presets/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("cluster/hw: unknown cluster %q (presets: %s)", name, strings.Join(Presets(), ", "))
	}
	return data, nil
}

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
	if _, err := presetFS.ReadFile("presets/" + nameOrPath + ".yaml"); err == nil {
		return Preset(nameOrPath)
	}
	if strings.HasSuffix(nameOrPath, ".yaml") || strings.HasSuffix(nameOrPath, ".yml") || strings.ContainsRune(nameOrPath, '/') {
		return Load(nameOrPath)
	}
	return nil, fmt.Errorf("cluster/hw: unknown cluster %q (presets: %s; or a YAML file)", nameOrPath, strings.Join(Presets(), ", "))
}
