package agent

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/realmodel"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/profile"
)

// localAgent serves this machine's ONNX Runtime (profile.Local on the host
// platform) on loopback.
func localAgent(t *testing.T) (*Client, *hw.Platform) {
	t.Helper()
	lib := assets.Require(t, assets.ORTLibrary())
	pl := hwtest.Preset(t, "host")
	dev, err := profile.NewLocal(lib, pl)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := startAgent(t, dev, Options{})
	return NewClient(ts.URL, testToken), pl
}

func TestLocalDevice(t *testing.T) {
	c, pl := localAgent(t)
	ctx := context.Background()
	di, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if di.ORTVersion == "" || len(di.Platform.Processors) != len(pl.Processors) {
		t.Errorf("info = %+v", di)
	}
	req := tinyRequest(t, pl.Processors[0].Name)
	req.Backend, req.DType = profile.LocalBackend, "float32"
	tm, err := c.Measure(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if tm.Reps != req.Reps || tm.Min <= 0 || tm.Min > tm.Median || tm.Median > tm.P90 || tm.P90 > tm.Max {
		t.Errorf("timing = %+v", tm)
	}

	// A well-formed model that ONNX Runtime cannot load (a bool input added
	// to a float32 weight): the agent answers measure_failed and keeps
	// serving.
	bad := tinyRequest(t, pl.Processors[0].Name)
	bad.Model = unsupportedModel(t)
	bad.Inputs[0].DType = graph.Bool
	if _, err := c.Measure(ctx, bad); !IsModelFailure(err) {
		t.Errorf("model ONNX Runtime rejects: %v, want a model failure", err)
	}
	if _, err := c.Measure(ctx, req); err != nil {
		t.Errorf("after a failed model: %v", err)
	}
}

// unsupportedModel is tinyModel with x and y declared bool, which does not
// type-check against the float32 weight.
func unsupportedModel(t *testing.T) []byte {
	t.Helper()
	return tinyModelTyped(t, graph.Bool)
}

// TestLocalRealSubgraph measures the first layers of a real model, exported
// as the profiler exports subgraphs, through the agent.
func TestLocalRealSubgraph(t *testing.T) {
	c, pl := localAgent(t)
	var rm assets.RealModel
	for _, m := range assets.RealModels() {
		if m.Name == "ocr_cls" {
			rm = m
		}
	}
	_, _, lg := realmodel.Load(t, rm)
	set := graph.Range(0, 3)
	model, err := onnx.ExportSubgraph(lg, set)
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := profile.SubgraphInputs(lg, set)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := c.Measure(context.Background(), profile.MeasureRequest{
		Model: model, Inputs: inputs, Processor: pl.Processors[len(pl.Processors)-1].Name, Warmup: 1, Reps: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if tm.Reps != 3 || tm.Median <= 0 {
		t.Errorf("timing = %+v", tm)
	}
	if testing.Verbose() {
		t.Logf("%s layers %s on %s: median %v", rm.Name, set.Key(), pl.Processors[len(pl.Processors)-1].Name, tm.Median)
	}
}
