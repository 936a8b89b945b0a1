package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/bench"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/search/driver"
)

// PlanRequest asks for a plan (inlay plan): a planner of the search
// registry, a budget, and optionally what-if changes to plan for.
type PlanRequest struct {
	Workload WorkloadInput `json:"workload"`
	// Planner is a registry name, "single:npu" or "puzzle:cut=0.01" (""
	// means inlay, the CLI's default).
	Planner string `json:"planner,omitempty"`
	// BudgetMs is the search's wall-clock budget (0: 10 s, or the
	// server's cap when Evals is set); at most the server's cap.
	BudgetMs int64   `json:"budget_ms,omitempty"`
	Evals    int     `json:"evals,omitempty"`
	Seed     *int64  `json:"seed,omitempty"`
	Workers  int     `json:"workers,omitempty"`
	WhatIf   *WhatIf `json:"whatif,omitempty"`
}

// maxEvals bounds a request's evaluation budget.
const maxEvals = 1_000_000

func (q *PlanRequest) check() error {
	if err := q.Workload.check(); err != nil {
		return err
	}
	if q.Planner == "" {
		q.Planner = "inlay"
	}
	if _, err := search.New(q.Planner); err != nil {
		return err
	}
	if q.BudgetMs < 0 || q.Evals < 0 || q.Evals > maxEvals || q.Workers < 0 || q.Workers > 1024 {
		return fmt.Errorf("serve: budget_ms, evals (≤ %d) and workers (≤ 1024) must not be negative", maxEvals)
	}
	return q.WhatIf.check()
}

// budget is the request's wall-clock budget within the server's cap.
func (s *Server) budget(ms int64, evals int) (time.Duration, error) {
	d := time.Duration(ms) * time.Millisecond
	if ms > math.MaxInt64/int64(time.Millisecond) || d > s.cfg.MaxBudget {
		return 0, badf("serve: budget_ms %d is over this server's limit of %d ms (inlay serve --max-budget)", ms, s.cfg.MaxBudget.Milliseconds())
	}
	switch {
	case d == 0 && evals == 0:
		d = min(driver.DefaultBudget, s.cfg.MaxBudget)
	case d == 0:
		d = s.cfg.MaxBudget // an evaluation budget still ends by the clock
	}
	return d, nil
}

// acquire takes a search slot, or says why not.
func (s *Server) acquire(w http.ResponseWriter) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
		writeError(w, http.StatusTooManyRequests, fmt.Errorf("serve: %d search(es) already running, the most this server runs at once (inlay serve --max-searches); try again when one ends", s.cfg.MaxSearches))
		return false
	}
}

func (s *Server) release() { <-s.slots }

// begin takes a search slot and, when the request asks for server-sent
// events, starts their stream (nil otherwise); false: it answered 429.
// The caller releases the slot.
func (s *Server) begin(w http.ResponseWriter, r *http.Request) (st *stream, ok bool) {
	if !s.acquire(w) {
		return nil, false
	}
	if wantsStream(r) {
		st = startStream(w)
	}
	return st, true
}

// Progress is one live update of a search.
type Progress struct {
	ID         string   `json:"id"`
	Planner    string   `json:"planner"`
	ElapsedS   float64  `json:"elapsed_s"`
	BudgetS    float64  `json:"budget_s"`
	Evals      int      `json:"evals"`
	BestScale  float64  `json:"best_scale"`
	BoundScale *float64 `json:"bound_scale"`
	Note       string   `json:"note,omitempty"`
}

// plan runs one search and answers its outcome; with Accept:
// text/event-stream it streams "start", "progress" and then "result" (or
// "error") events. POST /api/plan/{id}/cancel stops the search and keeps
// its best plan; the request going away cancels it outright.
func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	req, budget, prob, err := s.planProblem(r)
	if err != nil {
		fail(w, err)
		return
	}
	bound, err := ratebound.Upper(prob.Workload, prob.Platform, prob.Cost)
	if err != nil {
		fail(w, bad(err))
		return
	}
	if !s.acquire(w) {
		return
	}
	defer s.release()
	id, searchCtx, done := s.startSearch(r.Context())
	defer done()
	var st *stream
	if wantsStream(r) {
		st = startStream(w)
	}
	planner, _ := search.New(req.Planner) // checked by decode
	live := &liveProgress{st: st, start: time.Now(),
		last: Progress{ID: id, Planner: planner.Name(), BudgetS: budget.Seconds(), BoundScale: finiteScale(bound.Scale)}}
	st.send("start", live.last)
	workers := req.Workers
	if workers <= 0 || workers > s.cfg.Workers {
		workers = s.cfg.Workers
	}
	found, err := app.Search(searchCtx, app.SearchInput{Problem: prob, Planner: req.Planner, Seed: seedOf(req.Seed), Budget: budget,
		Evals: req.Evals, Workers: workers, ClockLimit: budget + time.Second, Progress: live.update})
	final := live.final(found)
	cancelled := searchCtx.Err() != nil && r.Context().Err() == nil
	if r.Context().Err() != nil {
		return // the browser went away: nobody to answer
	}
	if err != nil {
		if cancelled {
			err = fmt.Errorf("plan: cancelled before %s found a plan", planner.Name())
		}
		s.answer(w, st, nil, bad(fmt.Errorf("plan: planner %s: %w", planner.Name(), err)))
		return
	}
	o, err := evaluate(r.Context(), app.EvaluateInput{Problem: prob, Plan: found.Plan, Seed: seedOf(req.Seed), Bound: &bound, Proof: found.Proof, Explain: true})
	if err != nil {
		s.answer(w, st, nil, err)
		return
	}
	o.ID, o.SearchSeconds, o.SearchStopped, o.Evals, o.Cancelled = id, found.Seconds, found.Stopped, found.Evals, cancelled
	s.mu.Lock()
	s.plans.put(id, o)
	s.mu.Unlock()
	final.Evals = max(final.Evals, o.Evals)
	final.BestScale = o.MaxScale()
	st.send("progress", final)
	s.answer(w, st, o, nil)
}

// planProblem reads a plan request: the request, its budget within the
// server's cap, and the problem it names, what-if changes applied.
func (s *Server) planProblem(r *http.Request) (PlanRequest, time.Duration, app.Problem, error) {
	var req PlanRequest
	if err := decode(r, &req); err != nil {
		return req, 0, app.Problem{}, err
	}
	budget, err := s.budget(req.BudgetMs, req.Evals)
	if err != nil {
		return req, 0, app.Problem{}, err
	}
	wl, pl, err := s.load(req.Workload)
	if err != nil {
		return req, 0, app.Problem{}, err
	}
	if wl, pl, err = req.WhatIf.apply(wl, pl); err != nil {
		return req, 0, app.Problem{}, err
	}
	est, err := s.cost(pl, wl)
	return req, budget, app.Problem{Workload: wl, Platform: pl, Cost: est}, err
}

// startSearch registers a search under a new id, for its cancel endpoint;
// done forgets it.
func (s *Server) startSearch(ctx context.Context) (id string, searchCtx context.Context, done func()) {
	id = newID()
	searchCtx, stop := context.WithCancel(ctx)
	s.mu.Lock()
	s.searches[id] = stop
	s.mu.Unlock()
	return id, searchCtx, func() {
		stop()
		s.mu.Lock()
		delete(s.searches, id)
		s.mu.Unlock()
	}
}

// finiteScale is a bound for JSON: nil when there is none.
func finiteScale(b float64) *float64 {
	if math.IsInf(b, 1) {
		return nil
	}
	return &b
}

// liveProgress streams a search's progress, ten updates a second at most.
type liveProgress struct {
	st    *stream
	start time.Time
	mu    sync.Mutex
	last  Progress
	sent  time.Time
}

func (l *liveProgress) update(pg plan.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last.Evals, l.last.BestScale, l.last.Note = pg.Evals, pg.Best.Scale, pg.Note
	l.last.ElapsedS = time.Since(l.start).Seconds()
	if time.Since(l.sent) >= 100*time.Millisecond {
		l.sent = time.Now()
		l.st.send("progress", l.last)
	}
}

// final is the last progress, at the search's end.
func (l *liveProgress) final(found *app.Searched) Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last.ElapsedS = time.Since(l.start).Seconds()
	if found != nil {
		l.last.ElapsedS = found.Seconds
	}
	return l.last
}

// answer ends a plan or bench request: the value, or the error, as JSON or
// as the stream's last event.
func (s *Server) answer(w http.ResponseWriter, st *stream, v any, err error) {
	if st == nil {
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
		return
	}
	if err != nil {
		st.send("error", apiError{Error: strings.ReplaceAll(err.Error(), "\n", "; ")})
		return
	}
	st.send("result", v)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	stop, ok := s.searches[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("serve: no running search %q (it may have ended)", id))
		return
	}
	stop()
	writeJSON(w, http.StatusAccepted, map[string]string{"cancelled": id})
}

// BenchRequest asks for Puzzle's experiment (inlay bench).
type BenchRequest struct {
	Scenarios int      `json:"scenarios,omitempty"` // default 5, at most 50
	Planners  []string `json:"planners,omitempty"`  // default bench's
	BudgetMs  int64    `json:"budget_ms,omitempty"` // per planner and scenario; default 2 s
	Evals     int      `json:"evals,omitempty"`
	Seed      *int64   `json:"seed,omitempty"`
	Platform  string   `json:"platform,omitempty"` // preset or examples file; default phone
}

func (q *BenchRequest) check() error {
	if q.Scenarios == 0 {
		q.Scenarios = 5
	}
	if q.Scenarios < 0 || q.Scenarios > 50 {
		return fmt.Errorf("serve: bench: scenarios %d: want 1 to 50", q.Scenarios)
	}
	if len(q.Planners) == 0 {
		q.Planners = []string{"single:npu", "bestmap", "heft", "puzzle", "inlay"}
	}
	if len(q.Planners) > 16 {
		return errors.New("serve: bench: at most 16 planners")
	}
	for _, p := range q.Planners {
		if _, err := search.New(p); err != nil {
			return err
		}
	}
	if q.BudgetMs < 0 || q.Evals < 0 || q.Evals > maxEvals {
		return errors.New("serve: bench: budget_ms and evals must not be negative")
	}
	if q.BudgetMs == 0 && q.Evals == 0 {
		q.BudgetMs = 2000
	}
	if q.Platform == "" {
		q.Platform = "phone"
	}
	return nil
}

// bench runs the experiment; with Accept: text/event-stream it streams
// "progress" (a planner starts on a scenario), "scenario" (a scenario's
// row) and then "result" (the report with its summary).
func (s *Server) bench(w http.ResponseWriter, r *http.Request) {
	req, ok := request[BenchRequest](w, r)
	if !ok {
		return
	}
	budget, err := s.budget(req.BudgetMs, req.Evals)
	if err != nil {
		fail(w, err)
		return
	}
	if total := time.Duration(req.Scenarios*len(req.Planners)) * budget; total > s.cfg.MaxBenchTime {
		fail(w, badf("serve: bench: %d scenario(s) × %d planner(s) × %v is %v, over this server's limit of %v", req.Scenarios, len(req.Planners), budget, total, s.cfg.MaxBenchTime))
		return
	}
	pl, err := s.platformNamed(req.Platform)
	if err != nil {
		fail(w, err)
		return
	}
	est, err := s.cost(pl, nil)
	if err != nil {
		fail(w, err)
		return
	}
	st, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer s.release()
	in := app.BenchInput{Platform: pl, Cost: est, Planners: req.Planners, Scenarios: req.Scenarios, Seed: seedOf(req.Seed),
		Budget: budget, Evals: req.Evals, Workers: s.cfg.Workers, Repeats: 1,
		Progress: func(sc, pi int, name string) {
			st.send("progress", map[string]any{"scenario": sc, "planner": pi, "name": name, "scenarios": req.Scenarios})
		},
		Done: func(sr bench.ScenarioResult) { st.send("scenario", sr) },
	}
	rep, err := app.Bench(r.Context(), in)
	if r.Context().Err() != nil {
		return
	}
	s.answer(w, st, rep, err)
}

// stream writes server-sent events; a nil stream drops them.
type stream struct {
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
}

func wantsStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

func startStream(w http.ResponseWriter) *stream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: http.NewResponseController(w)}
	_ = st.rc.Flush()
	return st
}

func (st *stream) send(event string, v any) {
	if st == nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(apiError{Error: "serve: " + err.Error()})
		event = "error"
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	fmt.Fprintf(st.w, "event: %s\ndata: %s\n\n", event, data)
	_ = st.rc.Flush()
}
