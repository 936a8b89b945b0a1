// Package presetfs lists and reads the YAML presets a package embeds.
package presetfs

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Dir is a folder of NAME.yaml presets in an embedded file system. Pkg and
// What name the package and the thing in errors ("hw: unknown preset …").
type Dir struct {
	FS        fs.FS
	Dir       string
	Pkg, What string
}

// Names returns the presets' names, sorted.
func (d Dir) Names() []string {
	entries, err := fs.ReadDir(d.FS, d.Dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Has says whether a preset of that name is embedded.
func (d Dir) Has(name string) bool {
	_, err := fs.Stat(d.FS, d.Dir+"/"+name+".yaml")
	return err == nil
}

// Source returns a preset's YAML, comments and source citations included.
func (d Dir) Source(name string) ([]byte, error) {
	data, err := fs.ReadFile(d.FS, d.Dir+"/"+name+".yaml")
	if err != nil {
		return nil, fmt.Errorf("%s: unknown %s %q (presets: %s)", d.Pkg, d.What, name, strings.Join(d.Names(), ", "))
	}
	return data, nil
}

// Sources returns every preset's YAML in name order (the seeds of a
// parser's fuzz test, say).
func (d Dir) Sources() [][]byte {
	var out [][]byte
	for _, n := range d.Names() {
		if data, err := d.Source(n); err == nil {
			out = append(out, data)
		}
	}
	return out
}
