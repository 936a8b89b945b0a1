package plan

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/workload"
)

func TestHashes(t *testing.T) {
	w := &workload.Workload{Models: []*workload.Model{
		{Name: "a", Source: "a.onnx", Graph: &graph.Model{Hash: "aaaa"}},
		{Name: "z", Source: "zoo:z", Graph: &graph.Model{}},
	}}
	p := &Plan{Models: []ModelPlan{
		{Model: "a", Subgraphs: []Subgraph{{Layers: graph.LayerSet{0}, Processor: "cpu"}}},
		{Model: "z", Subgraphs: []Subgraph{{Layers: graph.LayerSet{0}, Processor: "cpu"}}},
	}}
	p.StampHashes(w)
	if p.Models[0].Hash != "aaaa" || p.Models[1].Hash != "" {
		t.Fatalf("hashes %q %q", p.Models[0].Hash, p.Models[1].Hash)
	}
	for _, f := range []Format{YAML, JSON} {
		data, err := p.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(data, f, "p")
		if err != nil {
			t.Fatal(err)
		}
		if back.Models[0].Hash != "aaaa" || back.Models[1].Hash != "" {
			t.Errorf("%s: hashes after a round trip %q %q:\n%s", f, back.Models[0].Hash, back.Models[1].Hash, data)
		}
	}
	if err := p.CheckHashes(w); err != nil {
		t.Errorf("unchanged models: %v", err)
	}
	w.Models[0].Graph.Hash = "bbbb"
	if err := p.CheckHashes(w); err == nil || !strings.Contains(err.Error(), `model "a" (a.onnx) changed since the plan was made`) {
		t.Errorf("changed model: %v", err)
	}
}
