package serve

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/report/trainreport"
	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/train/planner"
	"github.com/inlay-dev/inlay/zoo"
)

// Limits of a training-plan request: one request runs its planners one
// after another, each for at most its budget, on a cluster of at most
// maxTrainGPUs.
const (
	maxTrainGPUs        = 1024
	maxTrainPlanners    = 6
	maxTrainBudget      = 5 * time.Second
	defaultTrainBudget  = time.Second
	maxTrainGlobalBatch = 16384
	// maxTrainLayers bounds a one-line model's layers (the presets have
	// at most 128): the baselines' searches grow with them.
	maxTrainLayers = 256
	// maxTrainShown bounds the replicas a timeline draws; maxTrainSpans
	// its tasks.
	maxTrainShown = 8
	maxTrainSpans = 20000
)

var trainObjectives = []string{"throughput", "cost", "time"}

// TrainInfo is what GET /api/train/models answers: inlay train models
// --json's document (the model presets and the GPU types), the planners
// and this server's limits on a training-plan request.
type TrainInfo struct {
	trainreport.ModelsDoc
	Planners        []string `json:"planners"`
	Objectives      []string `json:"objectives"`
	DefaultBudgetMs int64    `json:"default_budget_ms"`
	MaxBudgetMs     int64    `json:"max_budget_ms"`
	MaxGPUs         int      `json:"max_gpus"`
	MaxPlanners     int      `json:"max_planners"`
}

func (s *Server) trainModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, TrainInfo{ModelsDoc: trainreport.Models(), Planners: planner.Names(), Objectives: trainObjectives,
		DefaultBudgetMs: defaultTrainBudget.Milliseconds(), MaxBudgetMs: s.trainBudgetCap().Milliseconds(), MaxGPUs: maxTrainGPUs,
		MaxPlanners: maxTrainPlanners})
}

// trainBudgetCap is a planner's longest budget here: maxTrainBudget, or
// the server's --max-budget when that is less.
func (s *Server) trainBudgetCap() time.Duration { return min(maxTrainBudget, s.cfg.MaxBudget) }

// TrainPlanRequest asks for inlay train plan with several planners side
// by side: a model, the GPUs (--gpus) and the job's goal and limits.
type TrainPlanRequest struct {
	// Model is a preset (GET /api/train/models), a one-line model
	// (gpt:hidden=…,layers=…) or a zoo network (zoo:NAME); the server
	// reads no model files.
	Model string `json:"model"`
	// Input is a zoo network's input per sample (3x224x224, the CLI's
	// --input; empty: the network's default).
	Input string `json:"input,omitempty"`
	// GPUs is COUNTxTYPE[,COUNTxTYPE…], each type in its own servers of
	// GPUsPerNode (default 8); IntraGBs and InterGbps as the CLI's flags.
	GPUs        string  `json:"gpus"`
	GPUsPerNode int     `json:"gpus_per_node,omitempty"`
	IntraGBs    float64 `json:"intra_gbs,omitempty"`
	InterGbps   float64 `json:"inter_gbps,omitempty"`
	Objective   string  `json:"objective,omitempty"`
	// Planners default to every planner of the registry.
	Planners          []string `json:"planners,omitempty"`
	GlobalBatch       int      `json:"global_batch,omitempty"`
	MaxGPUs           int      `json:"max_gpus,omitempty"`
	MaxDollarsPerHour float64  `json:"max_dollars_per_hour,omitempty"`
	// Prices are dollars per GPU-hour by type.
	Prices map[string]float64 `json:"prices,omitempty"`
	// Tokens is the token budget of the time objective.
	Tokens float64 `json:"tokens,omitempty"`
	// BudgetMs is each planner's search budget (default 1 s).
	BudgetMs int64 `json:"budget_ms,omitempty"`
}

func (q *TrainPlanRequest) check() error {
	if err := q.checkTarget(); err != nil {
		return err
	}
	if q.Objective == "" {
		q.Objective = "throughput"
	}
	if !slices.Contains(trainObjectives, q.Objective) {
		return fmt.Errorf("serve: train: objective %q: want %s", q.Objective, strings.Join(trainObjectives, ", "))
	}
	if len(q.Planners) == 0 {
		q.Planners = planner.Names()
	}
	if len(q.Planners) > maxTrainPlanners {
		return fmt.Errorf("serve: train: planners: %d given, at most %d", len(q.Planners), maxTrainPlanners)
	}
	for i, p := range q.Planners {
		if _, err := planner.New(p); err != nil {
			return fmt.Errorf("serve: train: planners: %v", err)
		}
		if slices.Contains(q.Planners[:i], p) {
			return fmt.Errorf("serve: train: planners: %s is listed twice", p)
		}
	}
	switch {
	case q.GlobalBatch < 0 || q.GlobalBatch > maxTrainGlobalBatch:
		return fmt.Errorf("serve: train: global_batch %d: want 0 (about 2M tokens) to %d sequences", q.GlobalBatch, maxTrainGlobalBatch)
	case q.MaxGPUs < 0:
		return fmt.Errorf("serve: train: max_gpus %d: must not be negative", q.MaxGPUs)
	case !(q.MaxDollarsPerHour >= 0) || !(q.Tokens >= 0):
		return errors.New("serve: train: max_dollars_per_hour and tokens must not be negative")
	case q.BudgetMs < 0:
		return fmt.Errorf("serve: train: budget_ms %d: must not be negative", q.BudgetMs)
	}
	return q.checkPrices()
}

// checkTarget checks the model and the GPUs: a preset or a one-line
// model, and a GPU list within the server's limit.
func (q *TrainPlanRequest) checkTarget() error {
	if q.Model == "" {
		return errors.New("serve: train: no model (a preset of GET /api/train/models, gpt:hidden=…,layers=…,heads=…, or zoo:NAME)")
	}
	if err := q.checkNetwork(); err != nil {
		return err
	}
	if _, ok := train.Preset(q.Model); !ok && !strings.HasPrefix(q.Model, "zoo:") {
		kind, _, line := strings.Cut(q.Model, ":")
		if !line || strings.ContainsAny(kind, "/.") {
			return fmt.Errorf("serve: train: model %q: not a preset (%s) nor a one-line model KIND:key=value,…", q.Model, strings.Join(train.PresetNames(), ", "))
		}
		m, err := train.ParseModelLine(q.Model)
		if err != nil {
			return fmt.Errorf("serve: train: model: %s", strings.TrimPrefix(err.Error(), "train: "))
		}
		if m.Layers > maxTrainLayers {
			return fmt.Errorf("serve: train: model %q: %d layers, over this server's limit of %d", q.Model, m.Layers, maxTrainLayers)
		}
	}
	list, err := train.ParseGPUList(q.GPUs)
	if err != nil {
		return fmt.Errorf("serve: train: gpus: %s", strings.TrimPrefix(err.Error(), "train: "))
	}
	total := 0
	for _, g := range list {
		total += g.Count
	}
	if total > maxTrainGPUs {
		return fmt.Errorf("serve: train: gpus %q: %d GPUs, over this server's limit of %d", q.GPUs, total, maxTrainGPUs)
	}
	if q.GPUsPerNode < 0 || q.GPUsPerNode > 64 {
		return fmt.Errorf("serve: train: gpus_per_node %d: want 1 to 64 (0: 8)", q.GPUsPerNode)
	}
	if !(q.IntraGBs >= 0) || !(q.InterGbps >= 0) {
		return errors.New("serve: train: intra_gbs and inter_gbps must not be negative")
	}
	return nil
}

// checkNetwork checks a zoo network and its input: it builds at that
// input (the same build the planners use). An input is refused for a
// transformer, whose sequence is its own.
func (q *TrainPlanRequest) checkNetwork() error {
	if !strings.HasPrefix(q.Model, "zoo:") {
		if q.Input != "" {
			return fmt.Errorf("serve: train: input %q: only a zoo network (zoo:NAME) takes an input shape; model %q is a transformer", q.Input, q.Model)
		}
		return nil
	}
	if _, err := zoo.Lookup(strings.TrimPrefix(q.Model, "zoo:")); err != nil {
		return fmt.Errorf("serve: train: model %q: %s", q.Model, strings.TrimPrefix(err.Error(), "zoo: "))
	}
	if _, err := train.ResolveNetwork(q.Model, q.Input); err != nil {
		return fmt.Errorf("serve: train: %s", strings.TrimPrefix(err.Error(), "train: "))
	}
	return nil
}

// checkPrices checks the prices' types and figures, and that the
// objective and the caps that need prices have one for every type.
func (q *TrainPlanRequest) checkPrices() error {
	for t, p := range q.Prices {
		if _, ok := train.LookupGPU(t); !ok {
			return fmt.Errorf("serve: train: prices: unknown GPU type %q (%s)", t, strings.Join(train.GPUNames(), ", "))
		}
		if !(p > 0) {
			return fmt.Errorf("serve: train: prices: %s %v: want a positive price per GPU-hour", t, p)
		}
	}
	if q.Objective != "cost" && q.MaxDollarsPerHour == 0 {
		return nil
	}
	list, _ := train.ParseGPUList(q.GPUs) // checked by checkTarget
	for _, g := range list {
		if q.priceOf(g.GPU.Name) == 0 {
			return fmt.Errorf("serve: train: prices: objective cost and max_dollars_per_hour need a price per GPU-hour for %s", g.GPU.Name)
		}
	}
	return nil
}

// priceOf is the price given for a type under any of its names.
func (q *TrainPlanRequest) priceOf(name string) float64 {
	for t, p := range q.Prices {
		if g, ok := train.LookupGPU(t); ok && g.Name == name {
			return p
		}
	}
	return 0
}

// input is the request as app.TrainPlan's input, with the budget.
func (q *TrainPlanRequest) input(budget time.Duration) app.TrainPlanInput {
	var prices []string
	for t, p := range q.Prices {
		prices = append(prices, t+"="+strconv.FormatFloat(p, 'g', -1, 64))
	}
	sort.Strings(prices)
	return app.TrainPlanInput{
		Spec:      train.Spec{Model: q.Model, Input: q.Input, Gpus: q.GPUs, GPUsPerNode: q.GPUsPerNode, IntraGBs: q.IntraGBs, InterGbps: q.InterGbps},
		Objective: q.Objective, Budget: budget, GlobalBatch: q.GlobalBatch, MaxGPUs: q.MaxGPUs,
		MaxDollarsPerHour: q.MaxDollarsPerHour, Prices: strings.Join(prices, ","), TokenBudget: q.Tokens,
	}
}

// TrainCompare is what POST /api/train/plan answers: each planner's plan
// for the same model and GPUs, in the order asked.
type TrainCompare struct {
	Model   string         `json:"model"`
	Cluster string         `json:"cluster"`
	GPUs    int            `json:"gpus"`
	Plans   []TrainPlanned `json:"plans"`
}

// TrainPlanned is one planner's answer: its plan file (inlay train plan
// --json, with --explain's notes), the iteration's timeline and memory,
// or the error that stopped it.
type TrainPlanned struct {
	Planner  string          `json:"planner"`
	Error    string          `json:"error,omitempty"`
	Result   *train.PlanFile `json:"result,omitempty"`
	Timeline *TrainTimeline  `json:"timeline,omitempty"`
}

// TrainTimeline is the plan's iteration as the simulator traced it, for
// the pipeline Gantt and the memory per GPU. Replicas alike (the same
// placements and batch share) run alike: it shows the first of each kind.
type TrainTimeline struct {
	IterationS float64 `json:"iteration_s"`
	Bubble     float64 `json:"bubble"`
	// Replicas is the plan's; Shown the replicas drawn (at most 8 kinds),
	// Like how many of the plan's replicas each stands for.
	Replicas int   `json:"replicas"`
	Shown    []int `json:"shown"`
	Like     []int `json:"like"`
	// Stages are the shown replicas' stages (inlay train simulate --json's
	// stages: time, memory per GPU against its capacity).
	Stages []train.StageResult `json:"stages"`
	// Spans are the shown replicas' tasks; Truncated says some were left
	// out (at most 20000).
	Spans     []train.Span `json:"spans"`
	Truncated bool         `json:"truncated,omitempty"`
}

// trainPlan runs the planners one after another; with Accept:
// text/event-stream it streams "planner" ({index, planner: TrainPlanned})
// as each ends and then "result" (TrainCompare) or "error". The request
// going away stops it before the next planner.
func (s *Server) trainPlan(w http.ResponseWriter, r *http.Request) {
	req, ok := request[TrainPlanRequest](w, r)
	if !ok {
		return
	}
	budget := defaultTrainBudget
	if req.BudgetMs > 0 {
		budget = time.Duration(req.BudgetMs) * time.Millisecond
		if req.BudgetMs > s.trainBudgetCap().Milliseconds() {
			fail(w, badf("serve: train: budget_ms %d is over this server's limit of %d ms per planner", req.BudgetMs, s.trainBudgetCap().Milliseconds()))
			return
		}
	}
	in := req.input(budget)
	m, c, err := train.ResolveTarget(in.Spec)
	if err != nil {
		fail(w, badf("serve: train: %s", strings.TrimPrefix(err.Error(), "train: ")))
		return
	}
	st, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer s.release()
	out := TrainCompare{Model: m.Name, Cluster: c.Name, GPUs: c.GPUs(""), Plans: []TrainPlanned{}}
	found := false
	_, err = app.TrainCompare(r.Context(), in, req.Planners, func(i int, row app.TrainCompared) {
		p := trainPlanned(row)
		found = found || p.Result != nil
		out.Plans = append(out.Plans, p)
		st.send("planner", map[string]any{"index": i, "planner": p})
	})
	if r.Context().Err() != nil {
		return // the browser went away: nobody to answer
	}
	if err == nil && !found {
		err = badf("serve: train: no planner found a plan: %s", out.Plans[0].Error)
	}
	if err != nil {
		s.answer(w, st, nil, bad(err))
		return
	}
	s.answer(w, st, out, nil)
}

// trainPlanned is one planner's row of the answer.
func trainPlanned(row app.TrainCompared) TrainPlanned {
	p := TrainPlanned{Planner: row.Planner}
	if row.Err != nil {
		p.Error = strings.ReplaceAll(row.Err.Error(), "\n", "; ")
		return p
	}
	p.Result, p.Timeline = row.Plan.File, timeline(row.Trace)
	return p
}

// timeline picks the replicas to draw from a traced iteration: the first
// of each kind, then fewer while their tasks are over maxTrainSpans.
func timeline(r *train.Result) *TrainTimeline {
	t := &TrainTimeline{IterationS: r.IterationS, Bubble: r.Bubble, Shown: []int{}, Like: []int{}, Stages: []train.StageResult{},
		Spans: []train.Span{}}
	if len(r.Stages) > 0 && r.Stages[0].Ranks > 0 {
		// stages with their own data parallelism run as one pipeline:
		// every stage's kinds of rank, one pipeline of tasks
		t.Replicas, t.Shown, t.Like, t.Stages = 1, []int{0}, []int{1}, r.Stages
		t.Spans = r.Spans[:min(len(r.Spans), maxTrainSpans)]
		t.Truncated = len(r.Spans) > maxTrainSpans
		return t
	}
	kinds := map[string]int{} // kind → index in Shown
	tasks := map[int]int{}
	for _, sp := range r.Spans {
		tasks[sp.Replica]++
	}
	for rep, key := range replicaKinds(r) {
		t.Replicas++
		if k, ok := kinds[key]; ok {
			t.Like[k]++
			continue
		}
		n := 0
		for _, x := range t.Shown {
			n += tasks[x]
		}
		if len(t.Shown) >= maxTrainShown || (len(t.Shown) > 0 && n+tasks[rep] > maxTrainSpans) {
			t.Truncated = true
			continue
		}
		kinds[key] = len(t.Shown)
		t.Shown, t.Like = append(t.Shown, rep), append(t.Like, 1)
	}
	for _, st := range r.Stages {
		if slices.Contains(t.Shown, st.Replica) {
			t.Stages = append(t.Stages, st)
		}
	}
	for _, sp := range r.Spans {
		if slices.Contains(t.Shown, sp.Replica) {
			if len(t.Spans) == maxTrainSpans {
				t.Truncated = true
				break
			}
			t.Spans = append(t.Spans, sp)
		}
	}
	return t
}

// replicaKinds names each replica's kind by its stages' placements and
// times: replicas of one kind run alike.
func replicaKinds(r *train.Result) []string {
	var keys []string
	for _, st := range r.Stages {
		for len(keys) <= st.Replica {
			keys = append(keys, "")
		}
		keys[st.Replica] += fmt.Sprintf("%s×%d %d-%d %.9g;", st.GPU, st.TP, st.Layers.First, st.Layers.Last, st.ComputeS)
	}
	return keys
}
