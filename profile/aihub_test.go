package profile

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
)

const aihubHeader = "model,aihub_dir,precision,device,runtime,inference_ms,primary_compute_unit,layers_total,layers_npu,layers_gpu,layers_cpu,peak_mem_max_mb\n"

func TestParseAIHub(t *testing.T) {
	rows, err := ParseAIHub([]byte(aihubHeader+
		"ResNet-18,resnet18,float,Samsung Galaxy S23,qnn_dlc,1.266,NPU,53,53,,,30\n"+
		"ResNet-18,resnet18,w8a16,Samsung Galaxy S23,qnn_dlc,0.9,NPU,53,53,,,30\n"+
		"Unknown net,x,w8a8,Samsung Galaxy S23,onnx,2,NPU,5,4,,1,\n"), "a.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Model != "resnet18" || rows[0].Precision != graph.Float16 || rows[0].Input.String() != (graph.Shape{1, 3, 224, 224}).String() ||
		rows[0].Device != "Samsung Galaxy S23" || rows[0].Processor != "npu" || rows[0].LayersNPU != 53 {
		t.Fatalf("rows: %+v", rows)
	}
	if rows[1].Precision != graph.Undefined || rows[2].Model != "" || rows[2].Precision != graph.Int8 || rows[2].LayersCPU != 1 {
		t.Errorf("rows 2 and 3: %+v %+v", rows[1], rows[2])
	}
	if !IsAIHub([]byte(aihubHeader)) || IsAIHub([]byte(publishedHeader)) {
		t.Error("IsAIHub tells the layouts apart wrongly")
	}
	checkParseErrors(t, ParseAIHub, "a.csv", []parseErrorCase{
		{"", "empty file"},
		{"model,bogus\n", `unknown column "bogus"`},
		{"model,aihub_dir,precision,device,runtime\n", `no column "inference_ms"`},
		{aihubHeader + "ResNet-18,resnet18,float,S23,qnn_dlc,-1,NPU,1,1,,,\n", "a.csv:2: inference_ms"},
		{aihubHeader + "ResNet-18,resnet18,float,S23,qnn_dlc,1,NPU,x,1,,,\n", "a.csv:2: layers_total"},
		{aihubHeader + ",resnet18,float,S23,qnn_dlc,1,NPU,1,1,,,\n", "a.csv:2: model: empty"},
		{aihubHeader + "ResNet-18,resnet18,float,S23,qnn_dlc,1\n", "6 fields"},
		{aihubHeader, "no rows"},
	})
}

func FuzzParseAIHub(f *testing.F) {
	f.Add([]byte(aihubHeader + "ResNet-18,resnet18,float,Samsung Galaxy S23,qnn_dlc,1.266,NPU,53,53,,,30\n"))
	f.Add([]byte("model,aihub_dir\n\"x"))
	fuzzParse(f, ParseAIHub, func(r Published) bool { return r.Latency <= 0 || r.Device == "" || r.Network == "" })
}

// aihubRows reads shared/measurements/aihub-published.csv; without it the
// test skips, or fails under make test (INLAY_REQUIRE_ASSETS).
func aihubRows(t *testing.T) []Published {
	t.Helper()
	data, err := os.ReadFile(assets.RequireShared(t, "measurements/aihub-published.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParseAIHub(data, "aihub-published.csv")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestWhollyOnNPUNotSplit: every network AI Hub shows wholly on a device's
// NPU (no layer on the CPU or GPU in a runtime) runs wholly on its
// preset's NPU, and so does ShuffleNet, whose channel shuffle reshapes
// and transposes at rank 5.
func TestWhollyOnNPUNotSplit(t *testing.T) {
	rows := aihubRows(t)
	nets := NewNetworks()
	checked := map[string]bool{}
	for _, dev := range AIHubDevices {
		pl := hwtest.Preset(t, dev.Preset)
		npu, err := pl.Find("npu")
		if err != nil {
			t.Fatal(err)
		}
		a := cost.NewAnalytic(pl)
		check := func(model string, in graph.Shape, d graph.DType) {
			key := dev.Preset + " " + model + " " + d.String()
			if checked[key] {
				return
			}
			checked[key] = true
			lg, err := nets.Layers(model, in)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Subgraph(lg, graph.Range(0, len(lg.Layers)), hw.Config{Proc: npu, Backend: "qnn-htp", DType: d}); err != nil {
				t.Errorf("%s: %s split off the NPU: %v", dev.Preset, model, err)
			}
		}
		for _, r := range rows {
			if r.Device == dev.Device && r.Model != "" && r.Precision != graph.Undefined && r.Processor == "npu" && r.LayersCPU == 0 && r.LayersGPU == 0 {
				check(r.Model, r.Input, r.Precision)
			}
		}
		check("shufflenet_v2_x1_0", graph.Shape{1, 3, 224, 224}, graph.Float16)
	}
	if len(checked) < 4*15 {
		t.Errorf("only %d network checks", len(checked))
	}
}

// TestPresetsCarryTheDeviceFits: each device preset's NPU holds the
// figures fitted to its AI Hub rows (regenerate them with inlay calibrate
// --published shared/measurements/aihub-published.csv), and they predict
// what the fit does. The Galaxy S23 is refitted here (about a second); the
// others are checked for their fitted_to and held_out lines.
func TestPresetsCarryTheDeviceFits(t *testing.T) {
	rows := aihubRows(t)
	for _, dev := range AIHubDevices {
		pl := hwtest.Preset(t, dev.Preset)
		npu, _ := pl.Find("npu")
		for _, ds := range pl.Processors[npu].DTypes {
			if ds.Fit == nil || !strings.Contains(ds.Fit.FittedTo, "aihub-published.csv ("+dev.Device+", "+PredictedRuntime+")") || !strings.Contains(ds.Fit.HeldOut, "leave one model out") {
				t.Errorf("%s npu %s carries no fit to its AI Hub rows: %+v", dev.Preset, ds.DType, ds.Fit)
			}
		}
	}
	fits, err := FitDevices(rows, DevicesOptions{Source: "aihub-published.csv", Devices: []string{"galaxy-s23"}})
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := hw.Preset("galaxy-s23")
	npu, _ := pl.Find("npu")
	a := cost.NewAnalytic(pl)
	nets := NewNetworks()
	for _, pf := range fits[0].Fit.Fits {
		for _, r := range pf.Rows {
			lg, err := nets.Layers(r.Row.Model, r.Row.Input)
			if err != nil {
				t.Fatal(err)
			}
			d, err := a.Subgraph(lg, graph.Range(0, len(lg.Layers)), hw.Config{Proc: npu, Backend: "qnn-htp", DType: pf.DType})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(float64(d-r.Fitted)) > 0.01*float64(r.Fitted) {
				t.Errorf("galaxy-s23 %s %s: the preset predicts %v, the fit %v; paste the fit in again", r.Row.Model, pf.DType, d, r.Fitted)
			}
		}
	}
}
