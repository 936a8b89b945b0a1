package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/agent"
	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/syncbuf"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"github.com/inlay-dev/inlay/onnx/onnxtest"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/workload"
)

func TestAgentCommandErrors(t *testing.T) {
	t.Setenv(app.AgentTokenEnv, "")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no token", []string{"agent", "--listen", "127.0.0.1:0"}, "no token"},
		{"white space token", []string{"agent", "--token", "a b"}, "white space"},
		{"platform without cores", []string{"agent", "--token", "t", "--platform", "phone"}, "lists no cores"},
		{"unknown platform", []string{"agent", "--token", "t", "--platform", "no-such-platform.yaml"}, "no-such-platform"},
		{"cores this machine lacks", []string{"agent", "--token", "t", "--platform", writeAgentPlatform(t)}, "core 4095"},
		{"bad size", []string{"agent", "--token", "t", "--max-upload", "lots"}, "size"},
		{"arguments", []string{"agent", "extra"}, "unknown command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runInlay(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// writeAgentPlatform writes a platform whose one processor is pinned to a
// core no machine here has.
func writeAgentPlatform(t *testing.T) string {
	t.Helper()
	pl := hwtest.Preset(t, "host")
	pl.Processors = pl.Processors[:1]
	pl.Processors[0].Cores = []int{4095}
	var buf bytes.Buffer
	if err := hw.Encode(&buf, pl); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "far.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeAgentRunFiles writes a workload of one model (group "relu", 50 Hz)
// and a plan running it whole on proc; it returns their paths.
func writeAgentRunFiles(t *testing.T, dir string, model []byte, proc string) (wpath, ppath string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "relu.onnx"), model, 0o644); err != nil {
		t.Fatal(err)
	}
	wpath = filepath.Join(dir, "w.yaml")
	text := "platform: host\nmodels:\n  - {name: relu, onnx: relu.onnx}\ngroups:\n  - {name: relu, models: [relu], period_ms: 20}\n"
	if err := os.WriteFile(wpath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := workload.Load(wpath)
	if err != nil {
		t.Fatal(err)
	}
	ppath = filepath.Join(dir, "plan.yaml")
	p := fmt.Sprintf("planner: manual\nplatform: host\nmodels:\n  - model: relu\n    priority: 0\n    subgraphs:\n      - {layers: 0-%d, processor: %s, backend: ort-cpu, dtype: float32}\n",
		len(w.Model("relu").Layers.Layers)-1, proc)
	if err := os.WriteFile(ppath, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return wpath, ppath
}

// agentTestModel is y = Relu(x), x float32 [1, 8].
func agentTestModel(t *testing.T) []byte {
	t.Helper()
	return onnxtest.Model(t, &onnxpb.GraphProto{
		Name:   proto.String("relu"),
		Input:  []*onnxpb.ValueInfoProto{onnxtest.ValueInfo("x", graph.Float32, []int64{1, 8})},
		Node:   []*onnxpb.NodeProto{{OpType: proto.String("Relu"), Input: []string{"x"}, Output: []string{"y"}}},
		Output: []*onnxpb.ValueInfoProto{onnxtest.ValueInfo("y", graph.Float32, []int64{1, 8})},
	})
}

// TestAgentCommandServes runs the command's server on loopback with this
// machine's ONNX Runtime and measures through the client.
func TestAgentCommandServes(t *testing.T) {
	lib := assets.Require(t, assets.ORTLibrary())
	t.Setenv(app.AgentTokenEnv, "from-env")
	f := &agentFlags{listen: "127.0.0.1:0", ortLib: lib, platform: "host", maxUpload: 1 << 20, quiet: true}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	var out syncbuf.Buffer // the agent's goroutines write it
	go func() { done <- runAgent(ctx, &out, &out, f, func(a string) { addr <- a }) }()
	var url string
	select {
	case a := <-addr:
		url = "http://" + a
	case err := <-done:
		t.Fatal(err)
	}
	c := agent.NewClient(url, "from-env")
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := c.Measure(ctx, profile.MeasureRequest{
		Model:     agentTestModel(t),
		Inputs:    []profile.TensorSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{1, 8}}},
		Processor: info.Platform.Processors[0].Name,
		Warmup:    1, Reps: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	if tm.Reps != 4 || tm.Median <= 0 {
		t.Errorf("timing = %+v", tm)
	}
	if _, err := agent.NewClient(url, "wrong").Info(ctx); err == nil {
		t.Error("a wrong token was accepted")
	}

	// inlay agent run: a plan run on the agent, as JSON.
	wpath, ppath := writeAgentRunFiles(t, t.TempDir(), agentTestModel(t), info.Platform.Processors[0].Name)
	runOut, err := runInlay(t, "agent", "run", wpath, "--plan", ppath, "--url", url, "--duration", "300ms", "--json")
	if err != nil {
		t.Fatalf("agent run: %v\n%s", err, runOut)
	}
	mustMatchOpenAPI(t, "RunResult", runOut)
	var got app.RunResult // the shape inlay run --json prints
	dec := json.NewDecoder(strings.NewReader(runOut))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("agent run --json: %v\n%s", err, runOut)
	}
	if len(got.Groups) != 1 || got.Groups[0].Requests == 0 || got.Groups[0].Requests != got.Groups[0].Completed+got.Groups[0].Dropped ||
		got.Groups[0].PredictedP50Ms <= 0 || got.Agent != url || got.Platform != info.Platform.Name || len(got.Processors) == 0 {
		t.Errorf("agent run --json: %s", runOut)
	}
	// The same as a table.
	table, err := runInlayStdout(t, "agent", "run", wpath, "--plan", ppath, "--url", url, "--duration", "200ms")
	if err != nil {
		t.Fatalf("agent run: %v\n%s", err, table)
	}
	for _, want := range []string{"ran " + ppath, "GROUP", "PREDICTED P50", "\nrelu "} {
		if !strings.Contains(table, want) {
			t.Errorf("agent run output lacks %q:\n%s", want, table)
		}
	}

	// inlay profile through the agent probes the hand-off on the agent's
	// device, pinned and unpinned, and stores both under its name.
	store := filepath.Join(t.TempDir(), "profiles.db")
	prof, _, err := runInlaySplit(t, "profile", wpath, "--agent", url, "--token", "from-env", "--profiles", store,
		"--planner", "none", "--chunks", "1", "--reps", "1", "--warmup", "0", "--cold", "0", "--corun=false")
	if err != nil {
		t.Fatalf("profile --agent: %v\n%s", err, prof)
	}
	if !strings.Contains(prof, "hand-off between dependent subgraphs") || !strings.Contains(prof, "unpinned: same processor") {
		t.Errorf("profile --agent does not report the hand-off:\n%s", prof)
	}
	st, err := profile.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	hos, err := st.HandOffs(info.Name)
	st.Close()
	if err != nil || len(hos) != 2 || hos[0].Pinned || !hos[1].Pinned || hos[0].Samples == 0 || hos[1].Cross <= 0 {
		t.Errorf("hand-offs stored for %s: %+v, %v; want an unpinned and a pinned one", info.Name, hos, err)
	}

	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"inlay agent", "ONNX Runtime " + info.ORTVersion, "listening on " + url, "uploads up to 1MiB", "agent stopped"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}
