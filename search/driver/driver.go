// Package driver is the one evaluation driver that search planners ask for
// evaluations (gonum-style reverse communication): it owns the budget (wall
// clock and evaluation count), the cache of plan scores, parallel workers,
// cancellation, the best plan so far and progress reporting, so every
// planner gets the same rules and bench comparisons are fair.
//
// Determinism: a batch's plans are evaluated by req.Workers goroutines but
// their scores are collected by index, and the evaluation budget is checked
// per plan in batch order before the batch starts, so for a given seed,
// evaluation budget and worker count the sequence of scores a planner sees
// is the same on every run. A wall-clock budget cuts the search wherever
// the clock says and is therefore not reproducible; use Evals for that.
package driver

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/plan"
)

// DefaultBudget is the wall-clock budget when a request gives neither a
// budget nor an evaluation count.
const DefaultBudget = 10 * time.Second

// StaleBatches is how many batches in a row may hold only plans already
// evaluated before the search stops on its own: the planner keeps
// proposing what it has seen, so its space (as far as it explores it) is
// exhausted. Without it a search with an evaluation budget and no wall
// clock would never end on a space smaller than the budget, since cache
// hits cost no evaluation.
const StaleBatches = 100

// Driver runs evaluations for one search.
type Driver struct {
	req   *plan.Request
	eval  plan.Evaluator
	start time.Time
	now   func() time.Time

	evals     int
	cache     map[string]plan.Score
	best      *plan.Plan
	bestScore plan.Score
	bestNote  string // the note when the best was found
	note      string
	// stale counts the batches in a row with no new plan; stopped is
	// why Done first said so ("" while it has not).
	stale   int
	stopped string
	// limits are the platform's memory capacities (none: unlimited).
	limits []hw.MemoryLimit
	// tried records what the search weighed, layer by layer:
	// tried[model][layer][proc] is the best scale of an evaluated plan
	// that ran the layer on the processor (-1: none did). Built lazily.
	tried map[string][][]float64
}

// New starts a driver; the wall clock starts now.
func New(req *plan.Request, eval plan.Evaluator) *Driver {
	d := &Driver{req: req, eval: eval, now: time.Now, cache: map[string]plan.Score{}}
	if req.Platform != nil {
		d.limits = req.Platform.MemoryLimits()
	}
	d.start = d.now()
	d.bestScore.Scale = -1
	return d
}

// Evals is the number of distinct plans evaluated so far (cache hits are free).
func (d *Driver) Evals() int { return d.evals }

// Elapsed is the wall-clock time since New.
func (d *Driver) Elapsed() time.Duration { return d.now().Sub(d.start) }

// budget returns the wall-clock budget in force (0: none).
func (d *Driver) budget() time.Duration {
	if d.req.Budget > 0 {
		return d.req.Budget
	}
	if d.req.Evals > 0 {
		return 0
	}
	return DefaultBudget
}

// Done reports whether the search must stop: context cancelled, budget
// spent, evaluations used up, or StaleBatches batches in a row with
// nothing new (Stopped says which).
func (d *Driver) Done(ctx context.Context) bool {
	why := d.stopReason(ctx)
	if why == "" {
		return false
	}
	if d.stopped == "" {
		d.stopped = why
		d.report()
	}
	return true
}

// Stopped says why the search stopped ("" while Done has not said so).
func (d *Driver) Stopped() string { return d.stopped }

func (d *Driver) stopReason(ctx context.Context) string {
	if ctx.Err() != nil {
		return "interrupted"
	}
	if d.req.Evals > 0 && d.evals >= d.req.Evals {
		return fmt.Sprintf("evaluation budget spent (%d)", d.req.Evals)
	}
	if b := d.budget(); b > 0 && d.Elapsed() >= b {
		return fmt.Sprintf("wall-clock budget spent (%v)", b)
	}
	if d.stale >= StaleBatches {
		return fmt.Sprintf("exhausted: the last %d batches proposed only plans already evaluated (%d distinct plans)", d.stale, d.evals)
	}
	return ""
}

// Note sets the text shown with progress ("generation 4").
func (d *Driver) Note(s string) { d.note = s }

// Evaluate scores one plan (see Batch).
func (d *Driver) Evaluate(ctx context.Context, p *plan.Plan) (plan.Score, bool) {
	s, ok := d.Batch(ctx, []*plan.Plan{p})
	return s[0], ok[0]
}

// Batch scores plans, in parallel on req.Workers workers. ok[i] is false
// when plan i was not evaluated because the budget ran out or the context
// was cancelled (its score is then Scale -1). Errors from the evaluator
// count as a score of 0 with the error as the reason: a planner may propose
// plans the evaluator rejects.
func (d *Driver) Batch(ctx context.Context, plans []*plan.Plan) ([]plan.Score, []bool) {
	scores := make([]plan.Score, len(plans))
	ok := make([]bool, len(plans))
	keys := make([]string, len(plans))
	var todo []int
	pending := map[string]int{}
	for i, p := range plans {
		scores[i].Scale = -1
		keys[i] = Key(p)
		if s, hit := d.cache[keys[i]]; hit {
			scores[i], ok[i] = s, true
			continue
		}
		if _, dup := pending[keys[i]]; dup {
			continue
		}
		// The first plan is always evaluated (unless cancelled), so that a
		// planner has something to return however short the budget.
		first := d.evals == 0 && len(todo) == 0 && ctx.Err() == nil
		if !first && (d.Done(ctx) || (d.req.Evals > 0 && d.evals+len(todo) >= d.req.Evals)) {
			continue
		}
		pending[keys[i]] = i
		todo = append(todo, i)
	}
	workers := d.req.Workers
	if workers < 1 {
		workers = 1
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers && w < len(todo); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if why := d.overMemory(plans[i]); why != "" {
					scores[i] = plan.Score{Scale: 0, Reason: why}
					continue
				}
				s, err := d.eval.Evaluate(ctx, plans[i])
				if err != nil {
					s = plan.Score{Scale: 0, Reason: errline.OneLine(err)}
				}
				scores[i] = s
			}
		}()
	}
	for _, i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		// A cancelled evaluation's score cannot be trusted.
		for _, i := range todo {
			scores[i].Scale = -1
		}
		return scores, ok
	}
	if len(todo) > 0 {
		d.stale = 0
	} else if d.stopReason(ctx) == "" {
		d.stale++ // nothing new, and not for want of budget
	}
	for _, i := range todo {
		ok[i] = true
		d.evals++
		d.cache[keys[i]] = scores[i]
		d.offer(plans[i], scores[i])
		d.record(plans[i], scores[i])
	}
	for i := range plans {
		if !ok[i] {
			if j, dup := pending[keys[i]]; dup && ok[j] {
				scores[i], ok[i] = scores[j], true
			}
		}
	}
	d.report()
	return scores, ok
}

// overMemory says which memory capacity of the platform a plan's resident
// weights exceed (plan.Validate's check; "" when none, or when the plan is
// malformed, which the evaluator reports). Such a plan scores 0 without a
// simulation, so every search planner steers clear of it.
func (d *Driver) overMemory(p *plan.Plan) string {
	if len(d.limits) == 0 || d.req.Workload == nil {
		return ""
	}
	pl := d.req.Platform
	use := make([]int64, len(pl.Processors))
	for _, mp := range p.Models {
		m := d.req.Workload.Model(mp.Model)
		if m == nil || m.Layers == nil {
			return ""
		}
		for _, s := range mp.Subgraphs {
			cfg, err := s.Config(pl)
			if err != nil {
				return ""
			}
			for _, l := range s.Layers {
				if l < 0 || l >= len(m.Layers.Layers) {
					return ""
				}
				use[cfg.Proc] += hw.WeightBytes(m.Layers.Layers[l].Work, cfg.DType)
			}
		}
	}
	for _, l := range d.limits {
		var sum int64
		for _, q := range l.Procs {
			sum += use[q]
		}
		if sum > l.Bytes {
			return fmt.Sprintf("over the memory capacity of %s: %.1f MiB of weights for %.1f MiB", l.What, float64(sum)/(1<<20), float64(l.Bytes)/(1<<20))
		}
	}
	return ""
}

// offer keeps p when it beats the best so far (ties keep the earlier plan).
func (d *Driver) offer(p *plan.Plan, s plan.Score) {
	if s.Scale > d.bestScore.Scale {
		d.best, d.bestScore, d.bestNote = p, s, d.note
	}
}

// record notes, for every layer of p, that a plan running it where p
// does scored s.
func (d *Driver) record(p *plan.Plan, s plan.Score) {
	pl, w := d.req.Platform, d.req.Workload
	if pl == nil || w == nil {
		return
	}
	if d.tried == nil {
		d.tried = map[string][][]float64{}
	}
	for _, mp := range p.Models {
		rows := d.tried[mp.Model]
		if rows == nil {
			m := w.Model(mp.Model)
			if m == nil || m.Layers == nil {
				continue
			}
			rows = make([][]float64, len(m.Layers.Layers))
			for l := range rows {
				rows[l] = make([]float64, len(pl.Processors))
				for q := range rows[l] {
					rows[l][q] = -1
				}
			}
			d.tried[mp.Model] = rows
		}
		for _, sg := range mp.Subgraphs {
			q, err := pl.Find(sg.Processor)
			if err != nil {
				continue
			}
			for _, l := range sg.Layers {
				if l >= 0 && l < len(rows) && s.Scale > rows[l][q] {
					rows[l][q] = s.Scale
				}
			}
		}
	}
}

// Decisions is what the search weighed for each subgraph of p, the plan it
// returns: for every processor, the best simulated scale among the plans
// it evaluated that ran the subgraph's first layer there (processors no
// evaluated plan tried are marked so).
func (d *Driver) Decisions(p *plan.Plan) []plan.Decision {
	pl := d.req.Platform
	var out []plan.Decision
	for _, mp := range p.Models {
		rows := d.tried[mp.Model]
		m := d.req.Workload.Model(mp.Model)
		if rows == nil || m == nil {
			continue
		}
		for _, sg := range mp.Subgraphs {
			if len(sg.Layers) == 0 {
				continue
			}
			first := sg.Layers[0]
			dec := plan.Decision{Model: mp.Model, Layers: sg.Layers.Key(),
				Step: fmt.Sprintf("best simulated scale of the %d plans evaluated, among those that ran layer %d (%s), the subgraph's first, on each processor", d.evals, first, m.Layers.Layers[first].Name)}
			for q, pr := range pl.Processors {
				c := plan.Candidate{Processor: pr.Name, Chosen: pr.Name == sg.Processor}
				if v := rows[first][q]; v >= 0 {
					c.Scores = []plan.NamedScore{{Name: plan.ScoreBestScale, Value: v}}
				} else {
					c.Filter, c.Why = plan.FilterUntried, "no evaluated plan ran the layer there"
				}
				dec.Candidates = append(dec.Candidates, c)
			}
			out = append(out, dec)
		}
	}
	return out
}

// Selection is the record of the best plan's choice, for the plan the
// search returns (nil before any evaluation).
func (d *Driver) Selection() *plan.Selection {
	if d.best == nil {
		return nil
	}
	return &plan.Selection{Evaluated: d.evals, Scale: d.bestScore.Scale, Phase: d.bestNote}
}

// Best is the best plan evaluated so far, and its score (nil before any).
func (d *Driver) Best() (*plan.Plan, plan.Score) { return d.best, d.bestScore }

// Result is the search's answer: a copy of the best plan, credited to the
// planner, with its selection record and decisions; an error when the
// budget ended before any plan was evaluated.
func (d *Driver) Result(planner string) (*plan.Plan, error) {
	if d.best == nil {
		return nil, fmt.Errorf("%s: the budget ended before any plan was evaluated", planner)
	}
	out := *d.best
	out.Planner, out.Selection = planner, d.Selection()
	out.Decisions = d.Decisions(&out)
	return &out, nil
}

func (d *Driver) report() {
	if d.req.Progress != nil {
		d.req.Progress(plan.Progress{Evals: d.evals, Best: d.bestScore, Note: d.note, Stopped: d.stopped})
	}
}

// Key is a canonical fingerprint of a plan's decisions (subgraphs, their
// configurations and priorities), used to recognise plans seen before.
func Key(p *plan.Plan) string {
	models := append([]plan.ModelPlan(nil), p.Models...)
	sort.Slice(models, func(i, j int) bool { return models[i].Model < models[j].Model })
	var b strings.Builder
	for _, m := range models {
		fmt.Fprintf(&b, "%s#%d{", m.Model, m.Priority)
		sgs := append([]plan.Subgraph(nil), m.Subgraphs...)
		sort.Slice(sgs, func(i, j int) bool { return sgs[i].Layers.Key() < sgs[j].Layers.Key() })
		for _, s := range sgs {
			fmt.Fprintf(&b, "%s@%s/%s/%s;", s.Layers.Key(), s.Processor, s.Backend, s.DType)
		}
		b.WriteString("}")
	}
	return b.String()
}
