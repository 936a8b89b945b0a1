package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// Compile turns a plan into the program the dispatcher runs:
//
//   - every processor of the platform becomes a server with its
//     Concurrency, every link a channel (Shared links contended);
//   - per group (in workload order) and per model of the group (in the
//     group's dependency order), one compute job per planned subgraph, with
//     the estimator's duration on the subgraph's configuration;
//   - a subgraph waits for every subgraph that produces one of its inputs
//     (the layer graph's edges); when the two run on processors in different
//     memory domains (hw.Platform.Link) and the estimator prices the copy
//     above zero, a transfer job of the edge's bytes (each tensor counted
//     once per pair of subgraphs) sits between them on that link;
//   - after dependencies: a model's source subgraphs (those without
//     predecessors) wait for the sink subgraphs (those without successors) of
//     every model it is listed after; every subgraph of the earlier model
//     precedes some sink, so the later model starts only after the earlier
//     one finished entirely. The dependency is control only: no copy.
//   - a model's jobs carry its plan's Priority;
//   - when the estimator is a cost.HandOffEstimator, a compute job's
//     duration includes the runtime's hand-off before it: the largest over
//     its dependencies (in the model and, for a source subgraph, the sinks
//     of the models it waits for) of the hand-off from the processor that
//     dependency ran on (a transfer's: the processor of the subgraph that
//     produced the data); a source subgraph of a model that waits for no
//     other gets the hand-off from processor -1 (it starts on its
//     request's arrival).
//
// A model listed in two groups is instantiated once per group. Compile checks
// what it needs to build a sound program (every model planned, every layer in
// exactly one subgraph, subgraphs not depending on each other in a cycle) and
// reports estimator errors (cost.ErrUnsupported) with the subgraph; the full
// validation with precise reasons is plan.Validate.
func Compile(w *workload.Workload, pl *hw.Platform, est cost.Estimator, p *plan.Plan) (*Program, error) {
	if w == nil || pl == nil || est == nil || p == nil {
		return nil, errors.New("sim: Compile needs a workload, a platform, an estimator and a plan")
	}
	for _, mp := range p.Models {
		if w.Model(mp.Model) == nil {
			return nil, fmt.Errorf("sim: plan has model %q, which the workload lacks", mp.Model)
		}
	}
	dp := &dispatch.Program{}
	for _, pr := range pl.Processors {
		conc := pr.Concurrency
		if conc < 1 {
			conc = 1
		}
		dp.Procs = append(dp.Procs, dispatch.Proc{Name: pr.Name, Concurrency: conc})
	}
	for _, l := range pl.Links {
		dp.Links = append(dp.Links, dispatch.Link{Name: l.From + "-" + l.To, Shared: l.Shared})
	}
	// Per model, the compiled subgraph structure is the same in every group.
	compiled := map[string]*modelJobs{}
	// loads are the jobs' contention loads (nil when the estimator has none).
	var loads []cost.Load
	_, withLoads := est.(cost.ContentionEstimator)
	withLoads = withLoads && len(pl.Shared) > 0
	for gi, g := range w.Groups {
		order, err := g.Order()
		if err != nil {
			return nil, fmt.Errorf("sim: group %q: %w", g.Name, err)
		}
		dg := dispatch.Group{Name: g.Name, Period: g.Period, Deadline: g.Deadline, Poisson: g.Arrival == workload.Poisson}
		dp.Groups = append(dp.Groups, dg)
		instances := map[string]*instance{}
		for _, name := range order {
			mj := compiled[name]
			if mj == nil {
				if mj, err = compileModel(w, pl, est, p, name, withLoads); err != nil {
					return nil, err
				}
				compiled[name] = mj
			}
			inst := mj.instantiate(dp, gi)
			if withLoads {
				loads = append(loads, mj.loads...)
			}
			instances[name] = inst
			for _, before := range g.After[name] {
				b := instances[before]
				if b == nil {
					return nil, fmt.Errorf("sim: group %q: model %q waits for %q, which is not before it", g.Name, name, before)
				}
				for _, src := range inst.sources {
					dp.Jobs[src].Deps = append(dp.Jobs[src].Deps, b.sinks...)
				}
			}
			if ho, ok := est.(cost.HandOffEstimator); ok {
				for i, src := range inst.sources {
					// A source waits for the sinks of the models it is
					// listed after, or starts on its request's arrival.
					var h time.Duration
					if len(g.After[name]) == 0 {
						h = mj.handOff(ho, mj.sources[i], -1, 0)
					}
					for _, before := range g.After[name] {
						for _, sink := range instances[before].sinks {
							sj := dp.Jobs[sink]
							h = max(h, mj.handOff(ho, mj.sources[i], sj.Proc, sj.Duration-sj.HandOff))
						}
					}
					dp.Jobs[src].Duration += h
					dp.Jobs[src].HandOff = h
				}
			}
		}
	}
	if err := dp.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return &Program{Program: dp, Planner: p.Planner, Platform: pl.Name, Contention: compileContention(dp, pl, loads)}, nil
}

// modelJobs is one model's compiled jobs, before numbering.
type modelJobs struct {
	name     string
	priority int
	jobs     []dispatch.Job // Deps index into jobs; Model is unset
	sources  []int          // compute jobs without dependencies
	sinks    []int          // compute jobs nothing in the model waits for
	loads    []cost.Load    // per job (zero for transfers), when asked for
	// lg, sets and cfgs are the model's layer graph and, per subgraph
	// (compute job), its layers and configuration: what a hand-off is
	// priced on.
	lg   *graph.LayerGraph
	sets []graph.LayerSet
	cfgs []hw.Config
}

// handOff is the estimator's hand-off before subgraph si after a job on
// processor from that ran for ran (its work, without its own hand-off):
// from another processor, the estimator's curve at ran
// (cost.CrossHandOffEstimator) where it has one and HandOff charges a
// hand-off at all.
func (mj *modelJobs) handOff(ho cost.HandOffEstimator, si, from int, ran time.Duration) time.Duration {
	h := ho.HandOff(mj.lg, mj.sets[si], mj.cfgs[si], from)
	if h == 0 || from < 0 || from == mj.cfgs[si].Proc {
		return h
	}
	if ce, ok := ho.(cost.CrossHandOffEstimator); ok {
		if d, ok := ce.CrossAfter(ran); ok {
			return d
		}
	}
	return h
}

type instance struct{ sources, sinks []int }

// instantiate appends the model's jobs to the program as a model of group gi.
func (mj *modelJobs) instantiate(dp *dispatch.Program, gi int) *instance {
	base := len(dp.Jobs)
	mi := len(dp.Models)
	dm := dispatch.Model{Name: mj.name, Group: gi, Priority: mj.priority}
	g := &dp.Groups[gi]
	for i, j := range mj.jobs {
		j.Model = mi
		j.Deps = make([]int, len(mj.jobs[i].Deps))
		for k, d := range mj.jobs[i].Deps {
			j.Deps[k] = base + d
		}
		dp.Jobs = append(dp.Jobs, j)
		dm.Jobs = append(dm.Jobs, base+i)
		g.Jobs = append(g.Jobs, base+i)
	}
	dp.Models = append(dp.Models, dm)
	g.Models = append(g.Models, mi)
	inst := &instance{}
	for _, s := range mj.sources {
		inst.sources = append(inst.sources, base+s)
	}
	for _, s := range mj.sinks {
		inst.sinks = append(inst.sinks, base+s)
	}
	return inst
}

func compileModel(w *workload.Workload, pl *hw.Platform, est cost.Estimator, p *plan.Plan, name string, withLoads bool) (*modelJobs, error) {
	wm := w.Model(name)
	mp := p.Model(name)
	if mp == nil {
		return nil, fmt.Errorf("sim: plan has no subgraphs for model %q", name)
	}
	lg := wm.Layers
	if lg == nil {
		return nil, fmt.Errorf("sim: model %q is not loaded (no layer graph)", name)
	}
	if len(mp.Subgraphs) == 0 {
		return nil, fmt.Errorf("sim: model %q: plan has no subgraphs", name)
	}
	owner := make([]int, len(lg.Layers))
	for i := range owner {
		owner[i] = -1
	}
	mj := &modelJobs{name: name, priority: mp.Priority, lg: lg}
	procs := make([]int, len(mp.Subgraphs))
	for si, sg := range mp.Subgraphs {
		if len(sg.Layers) == 0 {
			return nil, fmt.Errorf("sim: model %q: subgraph %d has no layers", name, si)
		}
		for _, l := range sg.Layers {
			if l < 0 || l >= len(lg.Layers) {
				return nil, fmt.Errorf("sim: model %q: subgraph %d: layer %d out of range (model has %d layers)", name, si, l, len(lg.Layers))
			}
			if owner[l] >= 0 {
				return nil, fmt.Errorf("sim: model %q: layer %d is in subgraphs %d and %d", name, l, owner[l], si)
			}
			owner[l] = si
		}
		cfg, err := sg.Config(pl)
		if err != nil {
			return nil, fmt.Errorf("sim: model %q: subgraph %d (layers %s): %w", name, si, sg.Layers.Key(), err)
		}
		d, err := est.Subgraph(lg, sg.Layers, cfg)
		if err != nil {
			return nil, fmt.Errorf("sim: model %q: subgraph %d (layers %s) on %s: %w", name, si, sg.Layers.Key(), sg.Processor, err)
		}
		procs[si] = cfg.Proc
		mj.sets = append(mj.sets, sg.Layers)
		mj.cfgs = append(mj.cfgs, cfg)
		if withLoads {
			l, _, err := loadOf(est, lg, sg.Layers, cfg)
			if err != nil {
				return nil, fmt.Errorf("sim: model %q: subgraph %d (layers %s) on %s: %w", name, si, sg.Layers.Key(), sg.Processor, err)
			}
			mj.loads = append(mj.loads, l)
		}
		mj.jobs = append(mj.jobs, dispatch.Job{
			Kind: dispatch.Compute, Subgraph: si, Label: fmt.Sprintf("%s[%s]", name, sg.Layers.Key()),
			Proc: cfg.Proc, Link: -1, Duration: d,
		})
	}
	for l, o := range owner {
		if o < 0 {
			return nil, fmt.Errorf("sim: model %q: layer %d (%s) is in no subgraph", name, l, lg.Layers[l].Name)
		}
	}
	// Subgraph-to-subgraph edges with their bytes, each tensor once per pair.
	pairs := lg.Crossings(owner)
	n := len(mp.Subgraphs)
	hasSucc := make([]bool, n)
	for _, k := range pairs {
		hasSucc[k.From] = true
		dep := k.From
		pa, pb := procs[k.From], procs[k.To]
		if link, ok := pl.Link(pa, pb); ok {
			if d := est.Transfer(k.Bytes, pa, pb); d > 0 {
				if withLoads {
					mj.loads = append(mj.loads, cost.Load{})
				}
				mj.jobs = append(mj.jobs, dispatch.Job{
					Kind: dispatch.Transfer, Subgraph: k.To, Proc: -1, Link: link, Duration: d, Bytes: k.Bytes,
					Label: fmt.Sprintf("%s[%s]>[%s]", name, mp.Subgraphs[k.From].Layers.Key(), mp.Subgraphs[k.To].Layers.Key()),
					Deps:  []int{k.From},
				})
				dep = len(mj.jobs) - 1
			}
		}
		mj.jobs[k.To].Deps = append(mj.jobs[k.To].Deps, dep)
	}
	if ho, ok := est.(cost.HandOffEstimator); ok {
		hand := make([]time.Duration, n)
		for _, k := range pairs {
			hand[k.To] = max(hand[k.To], mj.handOff(ho, k.To, procs[k.From], mj.jobs[k.From].Duration))
		}
		for si, h := range hand {
			mj.jobs[si].Duration += h
			mj.jobs[si].HandOff = h
		}
	}
	edges := make([][2]int, len(pairs))
	for i, k := range pairs {
		edges[i] = [2]int{k.From, k.To}
	}
	if cyc := subgraphCycle(n, edges); cyc >= 0 {
		return nil, fmt.Errorf("sim: model %q: subgraph %d (layers %s) depends on itself through other subgraphs (is it convex?)",
			name, cyc, mp.Subgraphs[cyc].Layers.Key())
	}
	for si := 0; si < n; si++ {
		if len(mj.jobs[si].Deps) == 0 {
			mj.sources = append(mj.sources, si)
		}
		if !hasSucc[si] {
			mj.sinks = append(mj.sinks, si)
		}
	}
	return mj, nil
}

// subgraphCycle returns a subgraph on a dependency cycle, or -1.
func subgraphCycle(n int, edges [][2]int) int {
	indeg := make([]int, n)
	succ := make([][]int, n)
	for _, e := range edges {
		indeg[e[1]]++
		succ[e[0]] = append(succ[e[0]], e[1])
	}
	var stack []int
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			stack = append(stack, i)
		}
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, s := range succ[x] {
			if indeg[s]--; indeg[s] == 0 {
				stack = append(stack, s)
			}
		}
	}
	for i := 0; i < n; i++ {
		if indeg[i] > 0 {
			return i
		}
	}
	return -1
}
