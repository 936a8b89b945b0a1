package hw

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/fuzzcheck"
)

func TestPresets(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total int
		types string
		nodes int
	}{
		{"gavel-108", 108, "k80,p100,v100", 108},
		{"gavel-108-servers", 108, "k80,p100,v100", 27},
		{"modern-mix", 112, "a100,h100,l4,t4", 18},
	} {
		p, err := Preset(tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if p.TotalGPUs() != tc.total || strings.Join(p.Types(), ",") != tc.types || len(p.Nodes) != tc.nodes {
			t.Errorf("%s: %d GPUs %v on %d nodes, want %d %s on %d", tc.name, p.TotalGPUs(), p.Types(), len(p.Nodes), tc.total, tc.types, tc.nodes)
		}
	}
	if p, _ := Preset("gavel-108"); p.Count("v100") != 36 || p.Count("k80") != 36 {
		t.Errorf("gavel-108 counts %d %d", p.Count("v100"), p.Count("k80"))
	}
}

const small = `name: c
gpu_types:
  - {name: a, memory_gib: 16, tensor_tflops: 1, fp32_tflops: 1, mem_bandwidth_gbs: 1}
nodes:
  - {name: a, gpu: a, count: 2, gpus: 4, intra: {kind: nvlink, bandwidth_gbs: 100}}
network: {bandwidth_gbs: 1, racks: 2}
`

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ok", small, ""},
		{"unknown gpu", strings.Replace(small, "gpu: a,", "gpu: b,", 1), `f.yaml:5: nodes[0].gpu: unknown GPU type "b" (gpu_types: "a")`},
		{"zero count", strings.Replace(small, "count: 2", "count: 0", 1), "nodes[0].count: must be at least 1"},
		{"no bandwidth", strings.Replace(small, "bandwidth_gbs: 100", "bandwidth_gbs: 0", 1), "nodes[0].intra.bandwidth_gbs: must be positive"},
		{"unknown field", strings.Replace(small, "racks: 2", "racks: 2, foo: 1", 1), `field foo not found`},
		{"bad type", strings.Replace(small, "gpus: 4", "gpus: four", 1), "f.yaml:5: cannot unmarshal"},
		{"empty", "", "empty cluster file"},
		{"network", strings.Replace(small, "bandwidth_gbs: 1,", "bandwidth_gbs: -1,", 1), "f.yaml:6: network.bandwidth_gbs: must be positive"},
		// Names with a space or a control character are refused where
		// they stand, quoted, as in platform files.
		{"cluster name with a space", strings.Replace(small, "name: c\n", "name: \"my c\"\n", 1), `f.yaml:1: name: name "my c" has a space or a control character`},
		{"GPU type with a tab", strings.Replace(small, "{name: a, memory", "{name: \"a\\tb\", memory", 1), `f.yaml:3: gpu_types[0].name: name "a\tb" has a space or a control character`},
		{"node group with a line break", strings.Replace(small, "{name: a, gpu", "{name: \"a\\nb\", gpu", 1), `f.yaml:5: nodes[0].name: name "a\nb" has a space or a control character`},
	} {
		p, err := Parse("f.yaml", []byte(tc.in))
		if tc.want == "" {
			if err != nil || len(p.Nodes) != 2 || p.Nodes[1].Rack != 1 || p.Nodes[1].Name != "a-1" {
				t.Errorf("%s: %v %+v", tc.name, err, p)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestResolveUnknown(t *testing.T) {
	if _, err := Resolve("nope"); err == nil || !strings.Contains(err.Error(), "gavel-108") {
		t.Errorf("got %v", err)
	}
}

func FuzzClusterParse(f *testing.F) {
	fuzzcheck.OneLineErrors(f, func(data []byte) error {
		_, err := Parse("f.yaml", data)
		return err
	}, append(presets.Sources(), []byte(small))...)
}
