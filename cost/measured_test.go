package cost

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/testfile"
)

func TestMeasuredOverride(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	base := NewAnalytic(p)
	lg := chain(4, 1e7, 32, 28, 28)
	lg.Model.Hash = "abc123"
	npu := cfg(t, p, "npu")
	gpu := cfg(t, p, "gpu")
	baseAll := mustSubgraph(t, base, lg, graph.Range(0, 4), npu)
	baseL2 := mustSubgraph(t, base, lg, graph.NewLayerSet(2), npu)
	baseGPU := mustSubgraph(t, base, lg, graph.Range(0, 4), gpu)

	json := `{"entries": [
  {"model": "abc123", "layers": "0-3", "processor": "npu", "backend": "qnn-htp", "dtype": "int8", "ms": 1.5},
  {"model": "abc123", "layers": "2", "processor": "npu", "backend": "qnn-htp", "dtype": "int8", "ms": 0.25},
  {"model": "other", "layers": "0-1", "processor": "gpu", "backend": "tflite-gpu", "dtype": "float16", "ms": 9}
]}`
	csv := "model,layers,processor,backend,dtype,ms\n" +
		"abc123,0-3,npu,qnn-htp,int8,1.5\n" +
		"abc123,2,NPU,qnn-htp,int8,0.25\n" +
		"other,0-1,gpu,tflite-gpu,float16,9\n"
	bare := `[{"model": "abc123", "layers": "0-3", "processor": "npu", "backend": "qnn-htp", "dtype": "int8", "ms": 1.5},
 {"model": "abc123", "layers": "2", "processor": "npu", "backend": "qnn-htp", "dtype": "int8", "ms": 0.25}]`
	for _, f := range []struct{ name, text string }{{"m.json", json}, {"m.csv", csv}, {"bare.json", bare}} {
		t.Run(f.name, func(t *testing.T) {
			m, err := LoadMeasured(testfile.Write(t, t.TempDir(), f.name, f.text), base, p)
			if err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				name string
				set  graph.LayerSet
				c    hw.Config
				want time.Duration
			}{
				{"exact subgraph", graph.Range(0, 4), npu, 1500 * time.Microsecond},
				{"layer alone", graph.NewLayerSet(2), npu, 250 * time.Microsecond},
				{"corrected by layer 2", graph.Range(1, 4), npu, mustSubgraph(t, base, lg, graph.Range(1, 4), npu) + 250*time.Microsecond - baseL2},
				{"nothing measured", graph.Range(0, 2), npu, mustSubgraph(t, base, lg, graph.Range(0, 2), npu)},
				{"other config", graph.Range(0, 4), gpu, baseGPU},
			}
			for _, tc := range tests {
				got, err := m.Subgraph(lg, tc.set, tc.c)
				if err != nil || got != tc.want {
					t.Errorf("%s: %v, %v; want %v (analytic whole model %v)", tc.name, got, err, tc.want, baseAll)
				}
			}
			if m.Transfer(1000, 0, 4) != base.Transfer(1000, 0, 4) {
				t.Error("Transfer differs from the base")
			}
		})
	}
}

// TestMeasuredKeepsUnsupported: a measurement never makes an unsupported
// node cheap.
func TestMeasuredKeepsUnsupported(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	lg := chain(2, 1e6, 8, 8, 8)
	lg.Model.Name = "lstmnet"
	lg.Model.Nodes[0].Op = "LSTM"
	m, err := NewMeasured([]Entry{{Model: "lstmnet", Layers: "0-1", Processor: "npu", Backend: "qnn-htp", DType: "int8", Ms: 0.1}}, NewAnalytic(p), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Subgraph(lg, graph.Range(0, 2), cfg(t, p, "npu")); !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v, want ErrUnsupported", err)
	}
}

func TestMeasuredErrors(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	base := NewAnalytic(p)
	entry := `[{"model": "h", "layers": "0-3", "processor": "npu", "backend": "qnn-htp", "dtype": "int8", "ms": 1}]`
	tests := []struct {
		name, file, text, want string
	}{
		{"unknown processor", "a.json", strings.Replace(entry, `"npu"`, `"tpu"`, 1), `a.json: entries[0]: processor: hw: platform "phone" has no processor or processor kind "tpu"`},
		{"bad dtype", "a.json", strings.Replace(entry, `"int8"`, `"int9"`, 1), `a.json: entries[0]: dtype: unknown data type "int9"`},
		{"backend not on processor", "a.json", strings.Replace(entry, `"qnn-htp"`, `"cuda"`, 1), `a.json: entries[0]: hw: processor "npu" has no backend "cuda"`},
		{"bad layers", "a.json", strings.Replace(entry, `"0-3"`, `"3-0"`, 1), `a.json: entries[0]: layers: bad layer set "3-0"`},
		{"negative time", "a.json", strings.Replace(entry, `"ms": 1`, `"ms": -1`, 1), `a.json: entries[0]: ms: -1 is not a duration`},
		{"no model", "a.json", strings.Replace(entry, `"h"`, `""`, 1), `a.json: entries[0]: model: is required`},
		{"unknown field", "a.json", strings.Replace(entry, `"ms"`, `"msec"`, 1), `a.json: json: unknown field "msec"`},
		{"duplicate", "a.json", "[" + entry[1:len(entry)-1] + "," + entry[1:len(entry)-1] + "]", `a.json: entries[1]: layers "0-3" measured twice`},
		{"csv missing column", "a.csv", "model,layers,processor,backend,ms\n", `a.csv: line 1: header lacks column "dtype"`},
		{"csv bad number", "a.csv", "model,layers,processor,backend,dtype,ms\nh,0,npu,qnn-htp,int8,fast\n", `a.csv: line 2: ms: bad number "fast"`},
		{"csv bad processor", "a.csv", "model,layers,processor,backend,dtype,ms\nh,0,npu,qnn-htp,int8,1\nh,1,dla,dla,int8,1\n", `a.csv: line 3: processor:`},
		{"csv empty", "a.csv", "", `a.csv: empty table`},
	}
	for _, tc := range tests {
		path := testfile.Write(t, t.TempDir(), tc.file, tc.text)
		_, err := LoadMeasured(path, base, p)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		msg := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), "")
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "cost: ") {
			t.Errorf("%s: error %q, want one line containing %q", tc.name, msg, tc.want)
		}
	}
}
