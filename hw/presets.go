package hw

import (
	"embed"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/internal/presetfs"
)

//go:embed presets/*.yaml
var presetFS embed.FS

// hostPreset is the preset built from this machine's cores.
const hostPreset = "host"

var presets = presetfs.Dir{FS: presetFS, Dir: "presets", Pkg: "hw", What: "preset"}

// Presets returns the names of the embedded presets, sorted.
func Presets() []string { return presets.Names() }

// PresetSource returns the embedded YAML of a preset, comments and source
// citations included. For "host" it is the per-core template.
func PresetSource(name string) ([]byte, error) { return presets.Source(name) }

// Preset returns a fresh copy of an embedded preset. "host" is built from
// the cores this process may run on (see HostCores).
func Preset(name string) (*Platform, error) {
	if name == hostPreset {
		return Host(HostCores())
	}
	return parsePreset(name)
}

func parsePreset(name string) (*Platform, error) {
	data, err := PresetSource(name)
	if err != nil {
		return nil, err
	}
	p, err := Parse("preset "+name, data)
	if err != nil {
		return nil, err
	}
	p.Source = "preset:" + name
	return p, nil
}

// Host builds the host preset for the given CPU cores: one processor per
// core, named "cpu<core>", pinned to it, copied from the template processor
// of presets/host.yaml.
func Host(cores []int) (*Platform, error) {
	if len(cores) == 0 {
		return nil, fmt.Errorf("hw: host platform needs at least one core")
	}
	p, err := parsePreset(hostPreset)
	if err != nil {
		return nil, err
	}
	tmpl := p.Processors[0]
	p.Processors = nil
	for _, c := range cores {
		pr := *tmpl
		pr.Name = "cpu" + strconv.Itoa(c)
		pr.Description = fmt.Sprintf("core %d of this machine", c)
		pr.Cores = []int{c}
		p.Processors = append(p.Processors, &pr)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// HostCores returns the CPU cores this process may run on: on Linux the
// Cpus_allowed_list of /proc/self/status, elsewhere (or when that cannot
// be read) 0 … runtime.NumCPU()-1.
func HostCores() []int {
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				if cores, err := parseCPUList(strings.TrimSpace(v)); err == nil && len(cores) > 0 {
					return cores
				}
			}
		}
	}
	n := runtime.NumCPU()
	cores := make([]int, n)
	for i := range cores {
		cores[i] = i
	}
	return cores
}

// parseCPUList reads the kernel's CPU list format: "0-3,8,10-11".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("bad CPU range %q", part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Resolve returns the preset of that name or, when no preset has it, the
// platform in that file.
func Resolve(nameOrPath string) (*Platform, error) {
	if presets.Has(nameOrPath) {
		return Preset(nameOrPath)
	}
	if _, err := os.Stat(nameOrPath); err != nil {
		return nil, fmt.Errorf("hw: %q is neither a preset (%s) nor a readable file", nameOrPath, strings.Join(Presets(), ", "))
	}
	return Load(nameOrPath)
}
