// Package explain says why each subgraph of a plan is where it is, in the
// manner of Nomad's explainable scores: for every processor of the
// platform, the filter that excluded it or the named scores it was given.
//
// Where the planner recorded its decisions as it chose (plan.Decision),
// the explanation shows those records, the figures the planner actually
// weighed: single records the target by design, bestmap each processor's
// whole-model time, heft each processor's earliest finish of the layer
// that opened the subgraph, and the search planners (inlay, puzzle) the
// best simulated scale of the plans they evaluated with that layer on each
// processor, beside how they chose the whole plan (plan.Selection). Where
// nothing was recorded for a subgraph (the milp planner's own plans, a
// plan read from a file), the explanation says so and falls back to a
// what-if chain computed after planning: filters (operator support,
// precision, memory) that may exclude a processor, then scorers that each
// append a named score (time, transfer, finish, load, max load) as if the
// subgraph ran there and the rest of the plan stayed as it is.
//
// The memory filter applies where the platform gives capacities
// (hw.Platform.MemoryLimits): a processor is excluded when moving the
// subgraph's weights there, in the least its allowed data types take,
// would put it or its domain over capacity.
//
// Explanation has a JSON form (its field tags) for inlay plan --json and
// the web UI, and Tables for the text and HTML reports.
package explain

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// Explanation explains every subgraph of a plan.
type Explanation struct {
	Planner string `json:"planner"`
	// Selection is how a search planner chose the whole plan (nil for
	// planners that record per-subgraph decisions).
	Selection *plan.Selection `json:"selection,omitempty"`
	Models    []Model         `json:"models"`
}

// Model is one model's subgraphs.
type Model struct {
	Model string `json:"model"`
	// RateHz is the model's request rate at scale 1 (over its groups).
	RateHz    float64    `json:"rate_hz"`
	Subgraphs []Subgraph `json:"subgraphs"`
}

// Subgraph is one subgraph and every processor considered for it.
type Subgraph struct {
	Layers    string `json:"layers"`
	Processor string `json:"processor"`
	Backend   string `json:"backend,omitempty"`
	DType     string `json:"dtype,omitempty"`
	// Recorded is true when the candidates are what the planner recorded
	// as it chose (plan.Decision), false when it recorded nothing for the
	// subgraph and they are the what-if chain computed after planning.
	Recorded bool `json:"recorded"`
	// Step says what the planner was doing when it decided, or that the
	// candidates are a what-if.
	Step    string      `json:"step,omitempty"`
	Options []Candidate `json:"candidates"`
}

// Candidate is one processor for a subgraph: excluded by a filter, or
// scored (the planner's record's form).
type Candidate = plan.Candidate

// Score is one named figure, appended by one scorer.
type Score = plan.NamedScore

// Filter and scorer names, in chain order.
const (
	FilterSupport   = plan.FilterSupport
	FilterPrecision = plan.FilterPrecision
	FilterMemory    = plan.FilterMemory
	ScoreTime       = plan.ScoreTime
	ScoreTransfer   = "transfer"
	ScoreFinish     = plan.ScoreFinish
	ScoreLoad       = "load"
	ScoreMaxLoad    = "max load"
)

// placed is where a subgraph runs as planned, and its time there.
type placed struct {
	proc int
	dur  time.Duration
	cfg  hw.Config
}

// Explain explains plan p of workload w on platform pl under estimator
// est. Times are in milliseconds; loads are busy-seconds per second over
// the processor's concurrency at scale 1 (their maximum's inverse is the
// plan's load limit), shared links left out. Finish is the subgraph's end
// in one isolated request of its model (its predecessors as planned,
// transfers paid, no contention, the model starting at 0). It returns an
// error when the plan does not fit the workload or platform.
func Explain(w *workload.Workload, pl *hw.Platform, est cost.Estimator, p *plan.Plan) (*Explanation, error) {
	rate := map[string]float64{}
	for _, g := range w.Groups {
		for _, m := range g.Models {
			rate[m] += g.RateHz()
		}
	}
	caps := make([]float64, len(pl.Processors))
	for i, pr := range pl.Processors {
		caps[i] = float64(max(pr.Concurrency, 1))
	}
	load := make([]float64, len(pl.Processors))
	places := make([][]placed, len(p.Models))
	for mi, mp := range p.Models {
		wm := w.Model(mp.Model)
		if wm == nil || wm.Layers == nil {
			return nil, fmt.Errorf("explain: model %q is not in the loaded workload", mp.Model)
		}
		for si, sg := range mp.Subgraphs {
			cfg, err := sg.Config(pl)
			if err != nil {
				return nil, fmt.Errorf("explain: model %q subgraph %d: %w", mp.Model, si, err)
			}
			d, err := est.Subgraph(wm.Layers, sg.Layers, cfg)
			if err != nil {
				return nil, fmt.Errorf("explain: model %q subgraph %d: %w", mp.Model, si, err)
			}
			places[mi] = append(places[mi], placed{cfg.Proc, d, cfg})
			load[cfg.Proc] += rate[mp.Model] * d.Seconds() / caps[cfg.Proc]
		}
	}
	limits := pl.MemoryLimits()
	var resident []int64 // weights per processor, where the platform bounds them
	if len(limits) > 0 {
		var err error
		if resident, err = p.WeightBytes(w, pl); err != nil {
			return nil, fmt.Errorf("explain: %w", err)
		}
	}
	ex := &Explanation{Planner: p.Planner, Selection: p.Selection}
	for mi, mp := range p.Models {
		wm := w.Model(mp.Model)
		lg := wm.Layers
		owner := make([]int, len(lg.Layers))
		for si, sg := range mp.Subgraphs {
			for _, l := range sg.Layers {
				owner[l] = si
			}
		}
		// Boundary bytes between subgraph pairs, each tensor once per pair.
		crossings := lg.Crossings(owner)
		// Isolated finish times as planned (subgraphs are listed in a
		// topological order).
		finish := make([]time.Duration, len(mp.Subgraphs))
		for si := range mp.Subgraphs {
			var start time.Duration
			for _, k := range crossings {
				if k.To == si {
					start = max(start, finish[k.From]+est.Transfer(k.Bytes, places[mi][k.From].proc, places[mi][si].proc))
				}
			}
			finish[si] = start + places[mi][si].dur
		}
		me := Model{Model: mp.Model, RateHz: rate[mp.Model]}
		for si, sg := range mp.Subgraphs {
			here := places[mi][si]
			out := Subgraph{Layers: sg.Layers.Key(), Processor: sg.Processor, Backend: here.cfg.Backend, DType: here.cfg.DType.String()}
			if d := recorded(p, mp.Model, sg, graph.Range(0, len(lg.Layers)).Key()); d != nil {
				out.Recorded, out.Step, out.Options = true, d.Step, d.Candidates
				me.Subgraphs = append(me.Subgraphs, out)
				continue
			}
			out.Step = whatIf(p)
			for q, pr := range pl.Processors {
				c := Candidate{Processor: pr.Name, Chosen: q == here.proc}
				if layer, why := unsupported(pl, q, lg, sg.Layers); why != "" {
					c.Filter, c.Why = FilterSupport, fmt.Sprintf("layer %d (%s): %s", layer, lg.Layers[layer].Op, why)
					out.Options = append(out.Options, c)
					continue
				}
				configs := wm.Configs(pl, q)
				if len(configs) == 0 {
					c.Filter, c.Why = FilterPrecision, fmt.Sprintf("the model allows %s; %s offers none of them", wm.AllowedString(), pr.Name)
					out.Options = append(out.Options, c)
					continue
				}
				if q != here.proc && len(limits) > 0 {
					if why := overCapacity(limits, resident, wm, sg.Layers, here, q, configs); why != "" {
						c.Filter, c.Why = FilterMemory, why
						out.Options = append(out.Options, c)
						continue
					}
				}
				best, bestDur, found := hw.Config{}, time.Duration(0), false
				var lastErr error
				for _, cfg := range configs {
					d, err := est.Subgraph(lg, sg.Layers, cfg)
					if err != nil {
						lastErr = err
						continue
					}
					if !found || d < bestDur {
						best, bestDur, found = cfg, d, true
					}
				}
				if !found {
					c.Filter = FilterSupport
					if errors.Is(lastErr, cost.ErrUnsupported) {
						c.Why = lastErr.Error()
					} else {
						c.Why = fmt.Sprint("cost model: ", lastErr)
					}
					out.Options = append(out.Options, c)
					continue
				}
				c.Config = best.Backend + "/" + best.DType.String()
				add := func(name string, v float64, unit string) {
					c.Scores = append(c.Scores, Score{Name: name, Value: v, Unit: unit})
				}
				add(ScoreTime, ms(bestDur), "ms")
				var transfer, start time.Duration
				for _, k := range crossings {
					switch {
					case k.To == si:
						t := est.Transfer(k.Bytes, places[mi][k.From].proc, q)
						transfer += t
						start = max(start, finish[k.From]+t)
					case k.From == si:
						transfer += est.Transfer(k.Bytes, q, places[mi][k.To].proc)
					}
				}
				add(ScoreTransfer, ms(transfer), "ms")
				add(ScoreFinish, ms(start+bestDur), "ms")
				moved := append([]float64(nil), load...)
				moved[here.proc] -= rate[mp.Model] * here.dur.Seconds() / caps[here.proc]
				moved[q] += rate[mp.Model] * bestDur.Seconds() / caps[q]
				add(ScoreLoad, moved[q], "")
				worst := 0.0
				for _, l := range moved {
					worst = math.Max(worst, l)
				}
				add(ScoreMaxLoad, worst, "")
				out.Options = append(out.Options, c)
			}
			me.Subgraphs = append(me.Subgraphs, out)
		}
		ex.Models = append(ex.Models, me)
	}
	return ex, nil
}

// recorded returns the planner's decision for subgraph sg of the model:
// the one recorded for its layers on its processor, else the one recorded
// for the whole model (whose layers a fallback may have split), else nil.
func recorded(p *plan.Plan, model string, sg plan.Subgraph, whole string) *plan.Decision {
	var wholeModel *plan.Decision
	key := sg.Layers.Key()
	for i := range p.Decisions {
		d := &p.Decisions[i]
		if d.Model != model {
			continue
		}
		if d.Layers == key {
			for _, c := range d.Candidates {
				if c.Chosen && c.Processor == sg.Processor {
					return d
				}
			}
		}
		if d.Layers == whole && wholeModel == nil {
			wholeModel = d
		}
	}
	return wholeModel
}

// whatIf is the step of a subgraph the planner recorded nothing for.
func whatIf(p *plan.Plan) string {
	how := p.Planner + " recorded no scores for this subgraph"
	if sel := p.Selection; sel != nil {
		how = fmt.Sprintf("%s chose the plan whole, the best of %d simulated (scale %.4g", p.Planner, sel.Evaluated, sel.Scale)
		if sel.Phase != "" {
			how += ", found in " + sel.Phase
		}
		how += ")"
	}
	return "what-if after planning (" + how + "): each row is this subgraph moved there alone, the rest of the plan as it is"
}

// overCapacity says which capacity moving a subgraph from its processor to
// q would exceed (its weights at the least q's allowed configurations
// take), or "".
func overCapacity(limits []hw.MemoryLimit, resident []int64, wm *workload.Model, set graph.LayerSet, here placed, q int, configs []hw.Config) string {
	var mine, there int64 = 0, -1
	for _, l := range set {
		mine += hw.WeightBytes(wm.Layers.Layers[l].Work, here.cfg.DType)
	}
	for _, c := range configs {
		var b int64
		for _, l := range set {
			b += hw.WeightBytes(wm.Layers.Layers[l].Work, c.DType)
		}
		if there < 0 || b < there {
			there = b
		}
	}
	moved := append([]int64(nil), resident...)
	moved[here.proc] -= mine
	moved[q] += there
	for _, lim := range limits {
		in, sum := false, int64(0)
		for _, p := range lim.Procs {
			in = in || p == q
			sum += moved[p]
		}
		if in && sum > lim.Bytes {
			return fmt.Sprintf("its %.1f MiB of weights would put %s at %.1f MiB of %.1f MiB", float64(there)/(1<<20), lim.What, float64(sum)/(1<<20), float64(lim.Bytes)/(1<<20))
		}
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// unsupported returns the first layer of set the processor cannot run and
// why, or "" when it runs them all.
func unsupported(pl *hw.Platform, q int, lg *graph.LayerGraph, set graph.LayerSet) (int, string) {
	for _, l := range set {
		for _, id := range lg.Layers[l].Nodes {
			if err := pl.Supports(q, lg.Model, lg.Model.Nodes[id]); err != nil {
				return l, err.Error()
			}
		}
	}
	return -1, ""
}

// Table is one subgraph's candidates as text cells: processor, the scores
// in the order their scorers ran, and the filter that excluded it; the
// chosen row marked.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// Tables lays the explanation out, one table per subgraph.
func (e *Explanation) Tables() []Table {
	var out []Table
	for _, m := range e.Models {
		for _, s := range m.Subgraphs {
			t := Table{Caption: fmt.Sprintf("%s [%s] on %s (%s, %s): %s", m.Model, s.Layers, s.Processor, s.Backend, s.DType, s.Step)}
			// The columns: every score any candidate has, in first-seen order.
			var names []string
			unit := map[string]string{}
			for _, c := range s.Options {
				for _, sc := range c.Scores {
					if _, seen := unit[sc.Name]; !seen {
						names = append(names, sc.Name)
						unit[sc.Name] = sc.Unit
					}
				}
			}
			t.Header = []string{"", "processor", "config"}
			for _, n := range names {
				t.Header = append(t.Header, strings.TrimSpace(n+" "+unit[n]))
			}
			t.Header = append(t.Header, "excluded by")
			for _, c := range s.Options {
				mark := ""
				if c.Chosen {
					mark = "*"
				}
				row := []string{mark, c.Processor, c.Config}
				if c.Config == "" {
					row[2] = "-"
				}
				for _, n := range names {
					v := c.Score(n)
					switch {
					case math.IsNaN(v):
						row = append(row, "-")
					case unit[n] == "ms":
						row = append(row, fmt.Sprintf("%.3f", v))
					default:
						row = append(row, fmt.Sprintf("%.4f", v))
					}
				}
				why := ""
				if c.Filter != "" {
					why = c.Filter
					if c.Why != "" {
						why += ": " + c.Why
					}
				}
				t.Rows = append(t.Rows, append(row, why))
			}
			out = append(out, t)
		}
	}
	return out
}
