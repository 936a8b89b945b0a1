package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/workload"
)

const runWorkload = `platform: host
models:
  - {name: tiny, onnx: models/tiny.onnx, inputs: {x: [2, 4]}}
groups:
  - {name: g, models: [tiny], period_ms: 20}
`

// writeRunFiles writes the run workload, its model and a plan that runs
// the whole model on processor proc; it returns the two paths.
func writeRunFiles(t *testing.T, proc, backend string) (wpath, ppath string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models", "tiny.onnx"), tinyModel(t), 0o644); err != nil {
		t.Fatal(err)
	}
	wpath = filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wpath, []byte(runWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := workload.Load(wpath)
	if err != nil {
		t.Fatal(err)
	}
	layers := len(w.Model("tiny").Layers.Layers)
	text := fmt.Sprintf("planner: manual\nplatform: host\nmodels:\n  - model: tiny\n    priority: 0\n    subgraphs:\n      - {layers: 0-%d, processor: %s, backend: %s, dtype: float32}\n", layers-1, proc, backend)
	ppath = filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(ppath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return wpath, ppath
}

// fakeExecutor records what it was asked to run and answers a result.
type fakeExecutor struct {
	mu   sync.Mutex
	runs []RunOptions
	w    *workload.Workload
	p    *plan.Plan
	err  error
}

func (e *fakeExecutor) Execute(ctx context.Context, w *workload.Workload, p *plan.Plan, opt RunOptions) (*runtime.Result, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs = append(e.runs, opt)
	e.w, e.p = w, p
	if e.err != nil {
		return nil, e.err
	}
	return &runtime.Result{Scale: opt.Scale, Duration: opt.Duration, Groups: []runtime.GroupResult{
		{Name: "g", Requests: 10, Completed: 9, Late: 1, Dropped: 1, P50: 3 * time.Millisecond, PredictedP50: 2 * time.Millisecond,
			Drops: []runtime.DropCount{{Reason: runtime.ReasonOverloaded, Count: 1, Example: "backlog full"}}},
	}}, nil
}

func TestRunFake(t *testing.T) {
	ex := &fakeExecutor{}
	ts, _ := startAgent(t, newFake(t), Options{Executor: ex, MaxRunDuration: time.Minute})
	c := NewClient(ts.URL, testToken)
	wpath, ppath := writeRunFiles(t, "cpu0", "ort-cpu")
	rb, err := RunFiles(wpath, ppath, RunOptions{Duration: 1500 * time.Millisecond, Scale: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(rb.Files) != 1 || len(rb.Files["models/tiny.onnx"]) == 0 || rb.PlanFormat != "yaml" {
		t.Fatalf("run request: files %v, plan format %q", len(rb.Files), rb.PlanFormat)
	}
	res, err := c.Run(context.Background(), rb)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.runs) != 1 || ex.runs[0] != (RunOptions{Duration: 1500 * time.Millisecond, Scale: 2, Seed: 7}) {
		t.Errorf("executor ran %+v", ex.runs)
	}
	if m := ex.w.Model("tiny"); m == nil || m.Graph == nil || m.Graph.Hash == "" {
		t.Errorf("the executor got workload %+v without the loaded model", ex.w)
	}
	if ex.p.Model("tiny") == nil {
		t.Errorf("the executor got plan %+v", ex.p)
	}
	g := res.Groups[0]
	if res.Scale != 2 || g.Name != "g" || g.Requests != 10 || g.Late != 1 || g.P50 != 3*time.Millisecond ||
		g.PredictedP50 != 2*time.Millisecond || len(g.Drops) != 1 || g.Drops[0].Example != "backlog full" {
		t.Errorf("result = %+v", res)
	}

	// An executor's failure is a clear error, and the agent keeps serving.
	ex.err = errors.New("runtime: plan: processor npu is not on this platform")
	if _, err := c.Run(context.Background(), rb); !IsModelFailure(err) || !strings.Contains(err.Error(), "processor npu") {
		t.Errorf("failing run: %v", err)
	}
}

func TestRunBadRequests(t *testing.T) {
	ex := &fakeExecutor{}
	ts, _ := startAgent(t, newFake(t), Options{Executor: ex, MaxRunDuration: time.Minute})
	wpath, ppath := writeRunFiles(t, "cpu0", "ort-cpu")
	good, err := RunFiles(wpath, ppath, RunOptions{Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	model := good.Files["models/tiny.onnx"]
	cases := []struct {
		name   string
		edit   func(rb *RunBody)
		status int
		text   string
	}{
		{"no duration", func(rb *RunBody) { rb.DurationMS = 0 }, 422, "duration"},
		{"too long", func(rb *RunBody) { rb.DurationMS = 3600e3 }, 422, "duration"},
		{"bad workload", func(rb *RunBody) { rb.Workload = "models: [" }, 422, "workload"},
		{"missing file", func(rb *RunBody) { rb.Files = nil }, 422, "not sent: models/tiny.onnx"},
		{"file outside", func(rb *RunBody) {
			rb.Workload = strings.Replace(rb.Workload, "models/tiny.onnx", "../tiny.onnx", 1)
			rb.Files = map[string][]byte{"../tiny.onnx": model}
		}, 422, "relative path inside"},
		{"file not named", func(rb *RunBody) { rb.Files["other.onnx"] = model }, 422, "not a model the workload names"},
		{"model not ONNX", func(rb *RunBody) { rb.Files = map[string][]byte{"models/tiny.onnx": []byte("junk")} }, 422, "tiny.onnx"},
		{"bad plan", func(rb *RunBody) { rb.Plan = "models: {" }, 422, "plan"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rb := good
			rb.Files = map[string][]byte{}
			for k, v := range good.Files {
				rb.Files[k] = v
			}
			tc.edit(&rb)
			body, err := json.Marshal(rb)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/run", strings.NewReader(string(body)))
			req.Header.Set("Authorization", "Bearer "+testToken)
			status, eb := send(t, req)
			t.Logf("%d %s", status, eb.Error)
			if status != tc.status || !strings.Contains(eb.Error, tc.text) || strings.Contains(eb.Error, os.TempDir()) {
				t.Errorf("got %d %+v, want %d containing %q (and no temporary path)", status, eb, tc.status, tc.text)
			}
		})
	}
	if len(ex.runs) != 0 {
		t.Errorf("bad run requests reached the executor: %d", len(ex.runs))
	}

	// An agent without an executor says so.
	plain, _ := startAgent(t, newFake(t), Options{})
	if _, err := NewClient(plain.URL, testToken).Run(context.Background(), good); err == nil || !strings.Contains(err.Error(), "does not run plans") {
		t.Errorf("agent without executor: %v", err)
	}
}

// TestRunLocal runs a plan for real through the agent on this machine.
func TestRunLocal(t *testing.T) {
	lib := assets.Require(t, assets.ORTLibrary())
	pl := hwtest.Preset(t, "host")
	ts, _ := startAgent(t, newFake(t), Options{Executor: &LocalExecutor{Library: lib, Platform: pl}})
	wpath, ppath := writeRunFiles(t, pl.Processors[0].Name, "ort-cpu")
	rb, err := RunFiles(wpath, ppath, RunOptions{Duration: 300 * time.Millisecond, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := NewClient(ts.URL, testToken).Run(context.Background(), rb)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) != 1 {
		t.Fatalf("groups = %+v", res.Groups)
	}
	g := res.Groups[0]
	if g.Requests == 0 || g.Requests != g.Completed+g.Dropped || g.PredictedP50 <= 0 {
		t.Errorf("group = %+v", g)
	}
	if g.Completed > 0 && g.P50 <= 0 {
		t.Errorf("completed %d requests with p50 %v", g.Completed, g.P50)
	}
}
