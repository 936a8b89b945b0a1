package runtime

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/workload/workloadtest"
)

// voiceWorkload writes and loads a workload of the small real models: the
// voice pipeline (mel front-end, then embedding, then the wake-word head;
// VAD beside them) and the OCR orientation classifier as a second group.
func voiceWorkload(t testing.TB) *workload.Workload {
	t.Helper()
	workloadtest.RequireVoice(t)
	assets.Require(t, assets.ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx"))
	return workloadtest.Load(t, voiceText)
}

const voiceText = "models:\n" + workloadtest.VoiceModels + `  - {name: ocr_cls, onnx: cache:ch_ppocr_mobile_v2.0_cls_infer.onnx, inputs: {x: [1, 3, 48, 192]}}
groups:
  - name: voice
    models: [melspec, speech_embed, wakeword, vad]
    after: {speech_embed: [melspec], wakeword: [speech_embed]}
    period_ms: 40
  - name: text
    models: [ocr_cls]
    rate_hz: 25
    deadline_ms: 30
`

// testPlan runs each model whole, the voice models on the first processor
// and the classifier on the second, except melspec, cut in two halves on
// the two processors so that tensors cross between subgraphs.
func testPlan(t testing.TB, w *workload.Workload, pl *hw.Platform) *plan.Plan {
	t.Helper()
	p := &plan.Plan{Planner: "test", Platform: pl.Name}
	a, b := pl.Processors[0].Name, pl.Processors[1].Name
	for i, m := range w.Models {
		all := make(graph.LayerSet, len(m.Layers.Layers))
		for k := range all {
			all[k] = k
		}
		mp := plan.ModelPlan{Model: m.Name, Priority: i}
		switch m.Name {
		case "melspec":
			half := len(all) / 2
			mp.Subgraphs = []plan.Subgraph{{Layers: all[:half], Processor: a}, {Layers: all[half:], Processor: b}}
		case "ocr_cls":
			mp.Subgraphs = []plan.Subgraph{{Layers: all, Processor: b}}
		default:
			mp.Subgraphs = []plan.Subgraph{{Layers: all, Processor: a}}
		}
		p.Models = append(p.Models, mp)
	}
	p.StampHashes(w)
	if err := p.Validate(w, pl); err != nil {
		t.Fatal(err)
	}
	return p
}

func testConfig(t testing.TB) Config {
	w := voiceWorkload(t)
	pl := hwtest.HostPair(t)
	return Config{
		Workload: w, Platform: pl, Plan: testPlan(t, w, pl), Cost: cost.NewAnalytic(pl),
		Library: assets.Require(t, assets.ORTLibrary()), Duration: time.Second, Seed: 1, Spans: true,
		// No queue bound and a long drain: whatever the load on the
		// machine, nothing is dropped but for the reason a test provokes.
		Backlog: -1, DrainTimeout: time.Minute,
	}
}

// checkAccounts checks that every request ended in exactly one state.
func checkAccounts(t *testing.T, res *Result) {
	t.Helper()
	for _, g := range res.Groups {
		if g.Requests != g.Completed+g.Dropped {
			t.Errorf("group %s: %d requests, %d completed + %d dropped", g.Name, g.Requests, g.Completed, g.Dropped)
		}
		if g.Late > g.Completed {
			t.Errorf("group %s: %d late of %d completed", g.Name, g.Late, g.Completed)
		}
		n := 0
		for _, d := range g.Drops {
			n += d.Count
			if d.Example == "" {
				t.Errorf("group %s: drop reason %s without detail", g.Name, d.Reason)
			}
		}
		if n != g.Dropped {
			t.Errorf("group %s: drop reasons add up to %d, dropped %d", g.Name, n, g.Dropped)
		}
		t.Logf("%-6s requests %3d completed %3d late %3d dropped %3d %v  p50 %v p99 %v (predicted %v, %v)",
			g.Name, g.Requests, g.Completed, g.Late, g.Dropped, g.Drops, g.P50, g.P99, g.PredictedP50, g.PredictedP99)
	}
}

func TestRun(t *testing.T) {
	c := testConfig(t)
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounts(t, res)
	for _, g := range res.Groups {
		// At these rates the plan is far from saturated: nothing is shed.
		if g.Requests < 20 || g.Dropped != 0 || g.Completed != g.Requests {
			t.Errorf("group %s: %d requests, %d completed, drops %v", g.Name, g.Requests, g.Completed, g.Drops)
		}
		if g.P50 <= 0 || g.P99 < g.P50 || g.PredictedP50 <= 0 {
			t.Errorf("group %s: p50 %v p99 %v predicted p50 %v", g.Name, g.P50, g.P99, g.PredictedP50)
		}
	}
	// melspec's second half reads the first half's outputs without a copy.
	if res.ZeroCopy < int64(res.Groups[0].Completed) || res.Copied != 0 {
		t.Errorf("zero-copy hand-offs %d, copies %d, for %d voice requests", res.ZeroCopy, res.Copied, res.Groups[0].Completed)
	}
	if len(res.Spans) == 0 || len(res.Lanes) != 2 {
		t.Fatalf("%d spans, lanes %v", len(res.Spans), res.Lanes)
	}
	perProc := map[string]int{}
	for _, s := range res.Spans {
		perProc[s.Processor]++
		if s.End < s.Start || s.Start < 0 {
			t.Errorf("span %+v runs backwards", s)
		}
	}
	for i, p := range res.Procs {
		if p.Runs == 0 || p.Runs != perProc[p.Name] || p.Busy <= 0 {
			t.Errorf("processor %d %+v: %d spans", i, p, perProc[p.Name])
		}
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	// Every planned subgraph reports one in-situ sample per completed run,
	// its service time never shorter than the run itself.
	planned := 0
	for _, mp := range c.Plan.Models {
		planned += len(mp.Subgraphs)
	}
	if len(res.Subgraphs) != planned {
		t.Fatalf("%d subgraph results, the plan has %d subgraphs", len(res.Subgraphs), planned)
	}
	runs := 0
	for _, sr := range res.Subgraphs {
		if len(sr.Run) == 0 || len(sr.Run) != len(sr.Service) || sr.Processor == "" || sr.Label == "" {
			t.Errorf("subgraph %s[%d] on %q: %d runs, %d service samples", sr.Model, sr.Index, sr.Processor, len(sr.Run), len(sr.Service))
		}
		for i := range sr.Run {
			if sr.Run[i] <= 0 || sr.Service[i] < sr.Run[i] {
				t.Errorf("%s: run %v, service %v", sr.Label, sr.Run[i], sr.Service[i])
			}
		}
		runs += len(sr.Run)
	}
	procRuns := 0
	for _, p := range res.Procs {
		procRuns += p.Runs
	}
	if runs != procRuns {
		t.Errorf("subgraph results count %d runs, the processors %d", runs, procRuns)
	}
}

// TestOverload runs at twice the rate scale the simulator finds
// sustainable and far beyond it: requests are shed, none goes unaccounted.
func TestOverload(t *testing.T) {
	c := testConfig(t)
	prog, err := sim.Compile(c.Workload, c.Platform, c.Cost, c.Plan)
	if err != nil {
		t.Fatal(err)
	}
	sus, _, err := sim.Sustain(prog, sim.Options{NoSpans: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("simulated max sustainable scale %.3g (%s)", sus.Scale, sus.Limit)
	for _, tc := range []struct {
		name   string
		scale  float64
		policy dispatch.Policy
	}{
		{"2x-sustainable", 2 * sus.Scale, dispatch.CompleteLate},
		{"20x-sustainable-droplate", 20 * sus.Scale, dispatch.DropLate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c
			c.Scale, c.Policy, c.Spans, c.Backlog, c.DrainTimeout = tc.scale, tc.policy, false, 0, 0
			res, err := Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			checkAccounts(t, res)
		})
	}
}

// failing fails every other run.
type failing struct {
	r     Runner
	calls atomic.Int64
}

func (f *failing) Run(in []*graph.Data) ([]*graph.Data, error) {
	if f.calls.Add(1)%2 == 0 {
		return nil, errors.New("ort: run: injected failure")
	}
	return f.r.Run(in)
}

// TestSubgraphError injects an ONNX Runtime error into one subgraph: the
// requests that hit it are dropped with the reason, the rest run on.
func TestSubgraphError(t *testing.T) {
	c := testConfig(t)
	c.Warmup = -1
	c.wrap = func(label string, r Runner) Runner {
		if strings.HasPrefix(label, "speech_embed[") {
			return &failing{r: r}
		}
		return r
	}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounts(t, res)
	voice, text := res.Groups[0], res.Groups[1]
	if voice.Dropped == 0 || voice.Completed == 0 || len(voice.Drops) != 1 || voice.Drops[0].Reason != ReasonError ||
		!strings.Contains(voice.Drops[0].Example, "speech_embed[") || !strings.Contains(voice.Drops[0].Example, "injected failure") {
		t.Errorf("voice: %d completed, %d dropped %v", voice.Completed, voice.Dropped, voice.Drops)
	}
	if text.Dropped != 0 || text.Completed != text.Requests {
		t.Errorf("text: %d requests, %d completed, drops %v", text.Requests, text.Completed, text.Drops)
	}
	// The failed requests' later models (the wake-word head) never ran.
	wake := 0
	for _, s := range res.Spans {
		if s.Model == "wakeword" {
			wake++
		}
	}
	if wake != voice.Completed {
		t.Errorf("wake-word head ran %d times for %d completed voice requests", wake, voice.Completed)
	}
}

// TestInterrupt cancels the run midway: it stops early, what was in flight
// is dropped as "shutdown", and the counts still add up.
func TestInterrupt(t *testing.T) {
	c := testConfig(t)
	c.Duration = time.Minute
	c.Scale = 4
	c.Warmup = -1
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int64
	c.wrap = func(label string, r Runner) Runner {
		if !strings.HasPrefix(label, "ocr_cls[") {
			return r
		}
		return runnerFunc(func(in []*graph.Data) ([]*graph.Data, error) {
			if runs.Add(1) == 10 {
				cancel() // the tenth classifier run ends the run
			}
			return r.Run(in)
		})
	}
	res, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Elapsed >= 10*time.Second {
		t.Errorf("interrupted %v after %v", res.Interrupted, res.Elapsed)
	}
	checkAccounts(t, res)
	if res.Groups[1].Completed < 9 {
		t.Errorf("%d classifier requests completed before the tenth ran", res.Groups[1].Completed)
	}
	for _, g := range res.Groups {
		for _, d := range g.Drops {
			if d.Reason != ReasonShutdown {
				t.Errorf("group %s: drop %+v", g.Name, d)
			}
		}
	}
}

type runnerFunc func([]*graph.Data) ([]*graph.Data, error)

func (f runnerFunc) Run(in []*graph.Data) ([]*graph.Data, error) { return f(in) }

// TestBadPlans: mistakes found before anything runs, each one line.
func TestBadPlans(t *testing.T) {
	w := voiceWorkload(t)
	pl := hwtest.HostPair(t)
	for _, tc := range []struct {
		name  string
		edit  func(p *plan.Plan)
		wants []string
	}{
		{"missing processor", func(p *plan.Plan) { p.Models[1].Subgraphs[0].Processor = "cpu99" },
			[]string{`model "speech_embed" subgraph 0 on processor "cpu99", which platform host lacks`}},
		{"changed model", func(p *plan.Plan) { p.Models[2].Hash = "0123456789abcdef" },
			[]string{`model "wakeword"`, "changed since the plan was made"}},
		{"other backend", func(p *plan.Plan) { p.Models[0].Subgraphs[0].Backend = "qnn-htp" },
			[]string{"qnn-htp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPlan(t, w, pl)
			tc.edit(p)
			_, err := Run(context.Background(), Config{
				Workload: w, Platform: pl, Plan: p, Cost: cost.NewAnalytic(pl), Library: "unused", Duration: time.Second,
			})
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestTransfers puts the two processors in different memory domains joined
// by a shared link: melspec's halves then hand their tensors over through
// transfer jobs that copy them into pooled buffers, and the results still
// flow.
func TestTransfers(t *testing.T) {
	c := testConfig(t)
	pl := hwtest.HostPair(t)
	pl.Domains = append(pl.Domains, hw.Domain{Name: "other"})
	pl.Processors[1].Domain = "other"
	pl.Links = append(pl.Links, hw.Link{From: pl.Processors[0].Domain, To: "other", BandwidthGBs: 10, Latency: 10 * time.Microsecond, Shared: true})
	if err := pl.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Platform, c.Cost = pl, cost.NewAnalytic(pl)
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounts(t, res)
	voice := res.Groups[0]
	if voice.Completed != voice.Requests || res.Copied < int64(voice.Completed) {
		t.Errorf("voice: %d of %d completed, %d tensors copied", voice.Completed, voice.Requests, res.Copied)
	}
	if len(res.Lanes) != 3 {
		t.Errorf("lanes %v: want the two processors and the link", res.Lanes)
	}
}

// TestSpin: workers that poll their queue before sleeping, and an event
// loop that polls before arrivals, run the same requests to the same end;
// a negative spin is refused.
func TestSpin(t *testing.T) {
	c := testConfig(t)
	c.Spin, c.ArrivalSpin = 100*time.Microsecond, time.Millisecond
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounts(t, res)
	for _, g := range res.Groups {
		if g.Requests < 20 || g.Completed != g.Requests {
			t.Errorf("group %s: %d requests, %d completed, drops %v", g.Name, g.Requests, g.Completed, g.Drops)
		}
	}
	if res.ArrivalLag < 0 || res.HandOff < 0 {
		t.Errorf("arrival lag %v, hand-off %v", res.ArrivalLag, res.HandOff)
	}
	c.Spin = -time.Microsecond
	if _, err := Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "negative spin") {
		t.Errorf("negative spin: %v", err)
	}
}

// TestPredict checks that Predict is the simulator's figure plus the
// arrival lag, for a result from elsewhere, and that it rejects a result
// whose groups are not the workload's.
func TestPredict(t *testing.T) {
	w := voiceWorkload(t)
	pl := hwtest.HostPair(t)
	c := Config{Workload: w, Platform: pl, Plan: testPlan(t, w, pl), Cost: cost.NewAnalytic(pl), Seed: 1, Scale: 1}
	res := &Result{}
	for _, g := range w.Groups {
		res.Groups = append(res.Groups, GroupResult{Name: g.Name})
	}
	if err := Predict(c, res); err != nil {
		t.Fatal(err)
	}
	base := append([]GroupResult(nil), res.Groups...)
	c.ArrivalLag = 3 * time.Millisecond
	if err := Predict(c, res); err != nil {
		t.Fatal(err)
	}
	for i, g := range res.Groups {
		if base[i].PredictedP50 <= 0 || g.PredictedP50 != base[i].PredictedP50+c.ArrivalLag || g.PredictedP99 != base[i].PredictedP99+c.ArrivalLag {
			t.Errorf("group %s: predicted %v/%v without lag, %v/%v with %v", g.Name, base[i].PredictedP50, base[i].PredictedP99, g.PredictedP50, g.PredictedP99, c.ArrivalLag)
		}
	}
	res.Groups[0].Name = "other"
	if err := Predict(c, res); err == nil {
		t.Error("a result with another group: no error")
	}
}
