package profile

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/fuzzcheck"
	"github.com/inlay-dev/inlay/internal/stats"
	"github.com/inlay-dev/inlay/zoo"
)

const publishedHeader = "model,input,precision,processor,runtime,latency_ms,layers_total,layers_npu,layers_gpu,layers_cpu,peak_memory_mb\n"

func TestParsePublished(t *testing.T) {
	rows, err := ParsePublished([]byte(publishedHeader+
		"resnet18,1x3x224x224,float16,npu,onnx,1.156,55,55,0,0,60\n"+
		"resnet18,1x3x224x224,int8,npu,onnx,20.045,87,78,0,9,193\n"), "p.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Latency != 1156*time.Microsecond || rows[1].LayersCPU != 9 || rows[1].Line != 3 ||
		rows[0].Precision != graph.Float16 || !rows[0].Input.Equal(graph.Shape{1, 3, 224, 224}) {
		t.Fatalf("rows %+v", rows)
	}
	checkParseErrors(t, ParsePublished, "p.csv", []parseErrorCase{
		{"", "p.csv: empty file"},
		{"model,input\n", `p.csv:1: no column "precision"`},
		{"model,input,precision,processor,runtime,latency_ms,colour\n", `p.csv:1: unknown column "colour"`},
		{publishedHeader, "p.csv: no rows"},
		{publishedHeader + "alexnet,1x3x224x224,float16,npu,onnx,1,1,1,0,0,1\n", `p.csv:2: model: unknown network "alexnet"`},
		{publishedHeader + "resnet18,1x3xaxb,float16,npu,onnx,1,1,1,0,0,1\n", "p.csv:2: input:"},
		{publishedHeader + "resnet18,1x3x224x224,fp16,npu,onnx,1,1,1,0,0,1\n", "p.csv:2: precision:"},
		{publishedHeader + "resnet18,1x3x224x224,float16,npu,onnx,-1,1,1,0,0,1\n", "p.csv:2: latency_ms:"},
		{publishedHeader + "resnet18,1x3x224x224,float16,npu,onnx,1,x,1,0,0,1\n", "p.csv:2: layers_total:"},
		{publishedHeader + "resnet18,1x3x224x224,float16,npu,onnx,1\n", "p.csv:2: 6 fields, the header has 11"},
		{publishedHeader + "resnet18,1x3x224x224,float16,,onnx,1,1,1,0,0,1\n", "p.csv:2: processor: empty"},
		{publishedHeader + "\"resnet18,1x3\n", "p.csv: line"},
	})
}

// parseErrorCase is a file's bytes and what its error must say.
type parseErrorCase struct{ data, want string }

// checkParseErrors: parse refuses every case's data, named file, with an
// error of one line that contains the case's want.
func checkParseErrors(t *testing.T, parse func([]byte, string) ([]Published, error), file string, cases []parseErrorCase) {
	t.Helper()
	for _, tc := range cases {
		_, err := parse([]byte(tc.data), file)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line with %q", tc.data, err, tc.want)
		}
	}
}

// fuzzParse fuzzes a parser of published latencies: its errors are one
// line, and no row it accepts is bad.
func fuzzParse(f *testing.F, parse func([]byte, string) ([]Published, error), bad func(Published) bool) {
	fuzzcheck.Accepted(f, func(data []byte) ([]Published, error) { return parse(data, "f.csv") }, func(t *testing.T, rows []Published) {
		for _, r := range rows {
			if bad(r) {
				t.Fatalf("accepted a bad row %+v", r)
			}
		}
	})
}

func FuzzParsePublished(f *testing.F) {
	f.Add([]byte(publishedHeader + "resnet18,1x3x224x224,float16,npu,onnx,1.156,55,55,0,0,60\n"))
	f.Add([]byte("model,input,precision,processor,runtime,latency_ms\nmobilenet_v2,1x3x224x224,int8,npu,tflite,0.5\n"))
	fuzzParse(f, ParsePublished, func(r Published) bool { return r.Latency <= 0 || len(r.Input) == 0 || r.Model == "" })
}

// TestFitPublishedRecovers: latencies made by a known set of factors are
// fitted back, every model predicted within a few percent when left out,
// and a CPU-fallback row is reported apart, not fitted.
func TestFitPublishedRecovers(t *testing.T) {
	pl := hwtest.Preset(t, "phone")
	pl = unfitted(pl)
	npu, _ := pl.Find("npu")
	truth := cost.DefaultEfficiency("npu")
	truth.PeakScale, truth.BandwidthScale, truth.DispatchOverhead, truth.LayerOverhead = 0.4, 0.8, 150*time.Microsecond, 4*time.Microsecond
	// The published fit's structure: the nominal bandwidth, no saturation.
	truth.Memory, truth.HalfFLOPs = 1, 0
	a, err := cost.NewPartlyCalibrated(pl, map[int]cost.Efficiency{npu: truth})
	if err != nil {
		t.Fatal(err)
	}
	csv := publishedHeader
	for _, name := range []string{"mobilenet_v2", "resnet18", "squeezenet1_1", "mobilenet_v3_small"} {
		lg := testLayers(t, name)
		d, err := a.Subgraph(lg, graph.Range(0, len(lg.Layers)), hw.Config{Proc: npu, Backend: "qnn-htp", DType: graph.Float16})
		if err != nil {
			t.Fatal(err)
		}
		csv += fmt.Sprintf("%s,1x3x224x224,float16,npu,qnn_dlc,%.4f,1,1,0,0,1\n", name, float64(d)/1e6)
	}
	csv += "resnet18,1x3x224x224,float16,npu,onnx,20,10,5,0,5,1\n"
	rows, err := ParsePublished([]byte(csv), "synthetic.csv")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	// Four factors the truth moved (four models pin down no more).
	res, err := FitPublished(pl, rows, PublishedOptions{MaxEvals: 600, Source: "synthetic.csv", Params: []string{"peak_scale", "dispatch_overhead", "layer_overhead", "requant_gbs"}, Prior: -1,
		Progress: func(int, int) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fits) != 1 || len(res.Fallback) != 1 || calls != 5 {
		t.Fatalf("%d fits, %d fallback rows, %d progress calls", len(res.Fits), len(res.Fallback), calls)
	}
	pf := res.Fits[0]
	t.Logf("leave-one-model-out median %.3f worst %.3f", pf.Median, pf.Worst)
	if !(pf.Worst < 0.1) {
		t.Errorf("worst held-out error %.3f on latencies the model made itself", pf.Worst)
	}
	// The platform written carries the fit, and predicts what the fit does.
	ds := res.Platform.Processors[npu].DTypes
	var fit *hw.DTypeFit
	for _, d := range ds {
		if d.DType == graph.Float16 {
			fit = d.Fit
		}
	}
	if fit == nil || !strings.Contains(fit.FittedTo, "synthetic.csv") {
		t.Fatalf("no fit on the platform's float16: %+v", ds)
	}
	if err := res.Platform.Validate(); err != nil {
		t.Fatal(err)
	}
	b := cost.NewAnalytic(res.Platform)
	for _, r := range pf.Rows {
		lg := testLayers(t, r.Row.Model)
		d, err := b.Subgraph(lg, graph.Range(0, len(lg.Layers)), hw.Config{Proc: npu, Backend: "qnn-htp", DType: graph.Float16})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(d-r.Fitted)) > 0.001*float64(r.Fitted) {
			t.Errorf("%s: the written platform predicts %v, the fit %v", r.Row.Model, d, r.Fitted)
		}
	}
}

// TestPhonePresetCarriesTheFit: the phone preset's NPU holds the figures
// fitted to shared/measurements/galaxy-s23-npu.csv (regenerate them with
// go run ./cmd/inlay calibrate --published FILE), and they reproduce the
// file's per-model medians as the fit did in sample.
func TestPhonePresetCarriesTheFit(t *testing.T) {
	data, err := os.ReadFile(assets.RequireShared(t, "measurements/galaxy-s23-npu.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParsePublished(data, "galaxy-s23-npu.csv")
	if err != nil {
		t.Fatal(err)
	}
	pl := hwtest.Preset(t, "phone")
	npu, _ := pl.Find("npu")
	for _, ds := range pl.Processors[npu].DTypes {
		if ds.Fit == nil || !strings.Contains(ds.Fit.FittedTo, "galaxy-s23-npu.csv") {
			t.Errorf("phone npu %s has no fit to galaxy-s23-npu.csv", ds.DType)
		}
	}
	a := cost.NewAnalytic(pl)
	byModel := map[string][]float64{}
	for _, r := range rows {
		if r.LayersCPU > 0 {
			continue
		}
		m, err := zoo.BuildWith(r.Model, r.Input)
		if err != nil {
			t.Fatal(err)
		}
		lg, _ := graph.BuildLayers(m)
		d, err := a.Subgraph(lg, graph.Range(0, len(lg.Layers)), hw.Config{Proc: npu, Backend: "qnn-htp", DType: r.Precision})
		if err != nil {
			t.Fatal(err)
		}
		key := r.Model + " " + r.Precision.String()
		byModel[key] = append(byModel[key], math.Abs(float64(d-r.Latency))/float64(r.Latency))
	}
	var errs []float64
	for _, e := range byModel {
		errs = append(errs, stats.Median(e))
	}
	if m := stats.Median(errs); m > 0.2 {
		t.Errorf("the preset's in-sample median error is %.1f %%; was the fit pasted in?", 100*m)
	}
}
