package planner

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/internal/stats"
	"github.com/inlay-dev/inlay/train"
)

// Inlay is the main planner. For each pipeline depth, micro-batch,
// recomputation and ZeRO stage it prices every (GPU type, TP) replica
// kind from the cost model's parts (train.PartCosts), caps each stage's
// layers by the memory model, balances the stages of each kind (uneven
// boundaries: the embedding's and the head's stages take fewer layers),
// keeps each type's two best kinds by throughput per GPU, and combines
// kinds of different types as unlike data-parallel replicas sharing the
// stage boundaries, with batch shares that equalise their estimated
// times (a replica that would slow the step gets no share and its GPUs
// stay free). Every combination is simulated; the boundaries of the best
// plan are then moved a layer at a time while the simulator says it
// helps. TP stays inside a server; replicas of one type fill whole
// servers before the next, so pipeline neighbours and data-parallel
// groups sit on the server's links where they can.
type Inlay struct{}

// Name is the registry's name.
func (Inlay) Name() string { return "inlay" }

// kind is a kind of replica: a GPU type and TP per stage (one type on
// every stage, or one type's stages followed by another's), and the
// context-parallel degree of its stages.
type kind struct {
	place []train.Placement
	cp    int
	// rc is the kind's own recomputation, heavier than the plan's, when
	// only that makes it fit (empty: the plan's)
	rc     string
	pcs    []train.PartCost // per stage
	caps   []int
	counts []int // its own balanced split
	rate   float64
	avail  int            // replicas the GPUs hold
	per    map[string]int // GPUs of each type one replica takes
}

// name describes the kind.
func (k *kind) name() string {
	out := ""
	for s, p := range k.place {
		if s == 0 || p != k.place[s-1] {
			if out != "" {
				out += " then "
			}
			out += fmt.Sprintf("%s tp %d", p.GPU, p.TP)
		}
	}
	if k.cp > 1 {
		out += fmt.Sprintf(", cp %d", k.cp)
	}
	if k.rc != "" {
		out += ", recompute " + k.rc
	}
	return out
}

// gpus is the GPUs one replica takes.
func (k *kind) gpus() int {
	return stats.SumBy(k.place, func(p train.Placement) int { return p.TP }) * max(k.cp, 1)
}

// newKind prices a kind on the setting's template plan (its CP degree
// the kind's): per-stage costs, memory caps with avail replicas, its
// balanced split and its rate.
func newKind(e *evaluator, base *train.Plan, place []train.Placement, avail int) kind {
	pp := len(place)
	k := kind{place: place, cp: base.ContextParallel(), avail: avail, per: map[string]int{}, pcs: make([]train.PartCost, pp), caps: make([]int, pp)}
	own := *base
	own.Replicas = []train.Replica{{Stages: place}}
	e.precision(&own)
	base = &own
	tmpl := *base
	tmpl.Replicas = make([]train.Replica, max(avail, 1))
	for i := range tmpl.Replicas {
		tmpl.Replicas[i].Batch = base.MicroBatch * pp
	}
	for s, pl := range place {
		k.per[pl.GPU] += pl.TP * k.cp
		k.pcs[s] = e.cost(pl.GPU, pl.TP, base)
		k.caps[s] = layerCap(e.m, e.c, &tmpl, s, pl.GPU, pl.TP)
	}
	k.counts = balance(e.m.Layers, k.caps, func(s, n int) float64 { return stageTime(k.pcs[s], n, s, pp) })
	if k.counts == nil {
		return k
	}
	mx := 0.0
	for s, n := range k.counts {
		mx = math.Max(mx, stageTime(k.pcs[s], n, s, pp))
	}
	k.rate = 1 / mx / float64(k.gpus())
	return k
}

// pure is the placement of one type and TP on pp stages.
func pure(gpu string, tp, pp int) []train.Placement {
	out := make([]train.Placement, pp)
	for s := range out {
		out[s] = train.Placement{GPU: gpu, TP: tp}
	}
	return out
}

// inlayNote is what Inlay recorded about a candidate.
type inlayNote struct {
	pp, micro, zero int
	recompute       string
	kinds           []kind
	split           string
	shares          string
	alternatives    map[string][]string
}

// evenShares builds the plan of every replica the kinds hold with the
// batch split evenly (what engines without batch shares run), when the
// micro-batches divide evenly.
func evenShares(base *train.Plan, counts []int, ks []kind, B int) *train.Plan {
	R := 0
	for _, k := range ks {
		R += k.avail
	}
	M := B / base.MicroBatch
	if R == 0 || M%R != 0 {
		return nil
	}
	p := *base
	p.Stages = ranges(counts)
	p.Replicas = nil
	for _, k := range ks {
		for r := 0; r < k.avail; r++ {
			p.Replicas = append(p.Replicas, train.Replica{Batch: M / R * base.MicroBatch, Stages: append([]train.Placement(nil), k.place...), Recompute: k.rc})
		}
	}
	return &p
}

// ppOptions are the pipeline depths tried: 1–8, then even depths to 16,
// then 20, 24 and 32, at most the layers and the GPUs.
func ppOptions(layers, gpus int) []int {
	var out []int
	for pp := 1; pp <= layers && pp <= gpus && pp <= 32; pp++ {
		if pp <= 8 || (pp <= 16 && pp%2 == 0) || pp == 20 || pp == 24 || pp == 32 {
			out = append(out, pp)
		}
	}
	return out
}

// Plan searches.
func (Inlay) Plan(m *train.Model, c *train.Cluster, o Options) (*Result, error) {
	start := time.Now()
	if err := o.check(m, c); err != nil {
		return nil, err
	}
	e := newEvaluator(m, c, o, inlayBudget(c))
	if m.Net != nil {
		planGraph(e)
		return e.finish("inlay", start)
	}
	seed(e, start, AMP{})
	seed(e, start, Metis{})
	stageDP(e)
outer:
	for _, rc := range recomputations {
		for _, pp := range ppOptions(m.Layers, c.GPUs("")) {
			for _, mb := range []int{1, 2, 4, 8} {
				if mb > o.GlobalBatch || o.GlobalBatch%mb != 0 {
					continue
				}
				zeros := []int{1}
				if pp == 1 {
					zeros = []int{1, 2}
				}
				for _, z := range zeros {
					if e.expired() {
						break outer
					}
					settle(e, pp, mb, rc, z)
				}
			}
		}
	}
	refine(e)
	refineShares(e)
	res, err := e.finish("inlay", start)
	if err != nil {
		return nil, err
	}
	res.Explain = explainInlay(e, res)
	return res, nil
}

// inlayBudget is Inlay's default search budget: a second, five with
// three GPU types or more, whose combinations of kinds are many more (the
// search of the three-type scenarios tried ends in 2–5 s; Sailor's takes
// over an hour).
func inlayBudget(c *train.Cluster) time.Duration {
	if len(c.Types()) > 2 {
		return 5 * time.Second
	}
	return time.Second
}

// seedNote marks a plan taken from a baseline's search.
type seedNote struct{ planner string }

// seed runs a baseline first, within a quarter of the budget, and tries
// its plan (as the device planners seed their search with HEFT): AMP's
// rank-order layouts put up to one stage run of each type in a replica's
// pipeline, in any order of the types, which inlay's own search covers
// for two types but not for three or more; Metis's device groups give
// stages their own data parallelism, across the types. Only for two
// types or more; the one-type grid is inside inlay's search.
func seed(e *evaluator, start time.Time, b Planner) {
	if len(e.c.Types()) < 2 {
		return
	}
	o := e.o
	o.Budget = e.deadline.Sub(start) / 4
	res, err := b.Plan(e.m, e.c, o)
	if err != nil {
		return
	}
	e.n += res.Evaluated
	p := *res.Plan
	p.Name = ""
	e.try(&p, seedNote{planner: b.Name()})
	if q, ok := p.AsReplicas(); ok {
		e.try(q, seedNote{planner: b.Name()})
	}
}

// heavier prices a kind that does not fit at the plan's recomputation
// with the next heavier that makes it fit, as its own (a type short of
// memory recomputes beside a roomier one that need not); the kind
// without a split when none does.
func heavier(e *evaluator, base *train.Plan, place []train.Placement, avail int) kind {
	var k kind
	for _, rc := range recomputations[slices.Index(recomputations, base.Recompute)+1:] {
		q := *base
		q.Recompute = rc
		if k = newKind(e, &q, place, avail); k.counts != nil {
			k.rc = rc
			return k
		}
	}
	return k
}

// settle tries the combinations of replica kinds for one setting.
func settle(e *evaluator, pp, mb int, rc string, zero int) {
	m, c, B := e.m, e.c, e.o.GlobalBatch
	base := basePlan(c, mb, B, rc, zero)
	base.Stages = train.EvenStages(m.Layers, pp)
	alts := map[string][]string{}
	var perType [][]kind
	for _, t := range c.Types() {
		var ks []kind
		for _, cp := range cpOptions(m) {
			withCP := *base
			withCP.CP = cp
			for _, tp := range tpOptions(m, c, t) {
				if cp > 1 && tp*cp > c.GPUsPerNode(t) {
					continue // the CP ring stays inside a server
				}
				avail := c.GPUs(t) / (pp * tp * cp)
				if avail == 0 {
					continue
				}
				what := fmt.Sprintf("tp %d", tp)
				if cp > 1 {
					what += fmt.Sprintf(" cp %d", cp)
				}
				k := newKind(e, &withCP, pure(t, tp, pp), avail)
				if k.counts == nil && len(c.Types()) > 1 {
					k = heavier(e, &withCP, pure(t, tp, pp), avail)
				}
				if k.counts == nil {
					alts[t] = append(alts[t], fmt.Sprintf("%s: does not fit (stage caps %v layers)", what, k.caps))
					continue
				}
				if k.rc != "" {
					what += ", recompute " + k.rc
				}
				alts[t] = append(alts[t], fmt.Sprintf("%s: %.3g sequences/s per GPU", what, k.rate*float64(mb)))
				ks = append(ks, k)
			}
		}
		perType = append(perType, bestKinds(ks))
	}
	mixed(e, base, perType, alts)
	// every choice of at most one kind per type, at least one kind, all
	// of one CP degree (the plan's)
	var pick func(i int, chosen []kind)
	pick = func(i int, chosen []kind) {
		if i == len(perType) {
			if len(chosen) > 0 {
				combine(e, base, chosen, alts)
			}
			return
		}
		pick(i+1, chosen)
		for _, k := range perType[i] {
			if len(chosen) == 0 || chosen[0].cp == k.cp {
				pick(i+1, append(chosen, k))
			}
		}
	}
	pick(0, nil)
}

// combine builds the plans of a set of kinds: the dominant kind's
// balanced split (within every kind's memory caps) and the even split.
func combine(e *evaluator, base *train.Plan, ks []kind, alts map[string][]string) {
	m := e.m
	// far kinds still get their own micro-batches, which ownMicro prices
	// itself: the kinds' rates at micro-batch 1 understate them (a fast
	// type's replica runs far larger micro-batches)
	far := e.beyondReach(base, ks)
	if far && base.MicroBatch != 1 {
		return
	}
	withCP := *base
	withCP.CP = 0
	if ks[0].cp > 1 {
		withCP.CP = ks[0].cp
	}
	base = &withCP
	pp := base.PP()
	dom := 0
	for i, k := range ks {
		if float64(k.avail*k.gpus())*k.rate > float64(ks[dom].avail*ks[dom].gpus())*ks[dom].rate {
			dom = i
		}
	}
	caps := make([]int, pp)
	for s := range caps {
		caps[s] = m.Layers
		for _, k := range ks {
			caps[s] = min(caps[s], k.caps[s])
		}
	}
	splits := map[string][]int{}
	if b := balance(m.Layers, caps, func(s, n int) float64 { return stageTime(ks[dom].pcs[s], n, s, pp) }); b != nil {
		splits["balanced for "+ks[dom].name()] = b
	}
	even := make([]int, pp)
	for s, r := range train.EvenStages(m.Layers, pp) {
		even[s] = r.Count()
	}
	splits["even"] = even
	names := slices.Sorted(maps.Keys(splits))
	for _, name := range names {
		counts := splits[name]
		if name == "even" && len(splits) == 2 && slices.Equal(counts, splits[names[0]]) {
			continue
		}
		note := &inlayNote{pp: pp, micro: base.MicroBatch, zero: base.Zero, recompute: base.Recompute, kinds: ks, split: name, alternatives: alts}
		if !far {
			if p := assemble(base, counts, ks, e.o.GlobalBatch); p != nil && !e.hopeless(p, ks) {
				e.try(p, note)
			}
		}
		if base.MicroBatch == 1 {
			// own micro-batches: once per setting, from the
			// micro-batch-1 pass (its kinds' caps are the loosest), at
			// each kind's recomputation and, beside other kinds, with
			// each replica's own (the estimate can prefer either wrongly)
			for _, ownRC := range []bool{false, true} {
				if ownRC && len(ks) < 2 {
					break
				}
				if p := ownMicro(e, base, counts, ks, ownRC); p != nil {
					own := *note
					own.shares = "own"
					e.try(p, &own)
				}
			}
		}
		if len(ks) > 1 && !far {
			if p := evenShares(base, counts, ks, e.o.GlobalBatch); p != nil && !e.hopeless(p, ks) {
				even := *note
				even.shares = "even"
				e.try(p, &even)
			}
		}
	}
}

// assemble builds the plan of the kinds on a split, giving the batch's
// micro-batches to replicas so that their estimated times are even.
func assemble(base *train.Plan, counts []int, ks []kind, B int) *train.Plan {
	P := len(counts)
	ts := make([][]float64, len(ks))
	for i, k := range ks {
		ts[i] = make([]float64, P)
		for s, n := range counts {
			ts[i][s] = stageTime(k.pcs[s], n, s, P)
		}
	}
	mbs := shares(ts, ks, B/base.MicroBatch)
	return withShares(base, counts, ks, mbs, func(_, n int) train.Replica { return train.Replica{Batch: n * base.MicroBatch} })
}

// withShares builds the plan of the kinds on a split with share[i][r] for
// replica r of kind i (none: the replica is left out), rep giving the
// replica's batch and micro-batch for a share; nil when no replica has
// one.
func withShares(base *train.Plan, counts []int, ks []kind, share [][]int, rep func(i, n int) train.Replica) *train.Plan {
	p := *base
	p.Stages = ranges(counts)
	p.Replicas = nil
	for i, k := range ks {
		for _, n := range share[i] {
			if n == 0 {
				continue
			}
			r := rep(i, n)
			r.Stages = append([]train.Placement(nil), k.place...)
			if r.Recompute == "" {
				r.Recompute = k.rc
			}
			if r.Recompute == p.Recompute {
				r.Recompute = ""
			}
			p.Replicas = append(p.Replicas, r)
		}
	}
	if len(p.Replicas) == 0 {
		return nil
	}
	return &p
}

// shares splits M micro-batches over the replicas of the kinds (avail
// each, stage times ts) so that the slowest replica's estimated time is
// least; a replica may get none.
func shares(ts [][]float64, ks []kind, M int) [][]int {
	sums, mxs := make([]float64, len(ts)), make([]float64, len(ts))
	for i := range ts {
		for _, t := range ts[i] {
			sums[i] += t
			mxs[i] = math.Max(mxs[i], t)
		}
	}
	level := func(i int, T float64) int {
		if T < sums[i] {
			return 0
		}
		return int((T-sums[i])/mxs[i]) + 1
	}
	total := func(T float64) int {
		n := 0
		for i, k := range ks {
			n += k.avail * level(i, T)
		}
		return n
	}
	hi := leastWithin(replicaTime(ts[0], M), func(T float64) bool { return total(T) >= M })
	out := make([][]int, len(ks))
	surplus := total(hi) - M
	lv := make([]int, len(ks))
	dec := make([]int, len(ks))
	for i := range ks {
		lv[i] = level(i, hi)
	}
	for surplus > 0 {
		bi, bt := -1, math.Inf(-1)
		for i := range ks {
			if lv[i] > 0 {
				if t := replicaTime(ts[i], lv[i]); t > bt {
					bi, bt = i, t
				}
			}
		}
		dec[bi]++
		surplus--
		if dec[bi] == ks[bi].avail {
			lv[bi]--
			dec[bi] = 0
			// the kind's replicas are all one lower now; the ones already
			// lowered go a second step only when chosen again
		}
	}
	for i, k := range ks {
		out[i] = make([]int, k.avail)
		for r := range out[i] {
			out[i][r] = lv[i]
			if r < dec[i] {
				out[i][r]--
			}
		}
	}
	return out
}

// refine moves one layer across each stage boundary of the best plan
// while the simulator says the plan gets better.
func refine(e *evaluator) {
	for round := 0; round < 8 && e.best != nil && !e.expired(); round++ {
		improved := false
		best := e.best
		for b := 0; b+1 < best.PP(); b++ {
			for _, d := range []int{-1, 1} {
				counts := make([]int, best.PP())
				for s, r := range best.Stages {
					counts[s] = r.Count()
				}
				counts[b] += d
				counts[b+1] -= d
				if counts[b] < 1 || counts[b+1] < 1 {
					continue
				}
				q := *best
				q.Stages = ranges(counts)
				before := e.score
				if e.try(&q, e.note); e.score > before {
					improved = true
				}
			}
		}
		if !improved {
			return
		}
	}
}

// explainInlay writes down why the plan is as it is.
func explainInlay(e *evaluator, res *Result) *Explain {
	x := &Explain{}
	if seed, ok := e.note.(seedNote); ok {
		return explainSeed(e, res, seed)
	}
	if g, ok := e.note.(*stageDPNote); ok {
		return explainStageDP(e, res, g)
	}
	n, _ := e.note.(*inlayNote)
	if n == nil {
		return x
	}
	p, sim := res.Plan, res.Sim
	x.Choices = append(x.Choices,
		fmt.Sprintf("pp %d%s, micro-batch %d, recompute %s, ZeRO %d: the best of %d simulated plans for the %s objective", n.pp, cpNote(p), n.micro, n.recompute, n.zero, res.Evaluated, e.o.Objective))
	used := map[string]int{}
	for _, r := range p.Replicas {
		used[fmt.Sprint(r.Stages)]++
	}
	for _, k := range n.kinds {
		x.Choices = append(x.Choices, fmt.Sprintf("%s: %d of the %d replicas its GPUs hold, batch shares set to even out their times", k.name(), used[fmt.Sprint(k.place)], k.avail))
	}
	for _, t := range slices.Sorted(maps.Keys(n.alternatives)) {
		x.Choices = append(x.Choices, fmt.Sprintf("TP options on %s: %s", t, strings.Join(n.alternatives[t], "; ")))
	}
	x.Choices = append(x.Choices, "stage boundaries: "+n.split+" (then moved a layer at a time while the simulator improved)")
	if n.shares == "own" {
		x.Choices = append(x.Choices, "micro-batches: each replica its own (of those from 1 to 16 that divide its batch share and fit, the one that runs the share fastest), shares set to even out their times")
		if slices.ContainsFunc(p.Replicas, func(r train.Replica) bool { return r.Recompute != "" && r.Recompute != p.Recompute }) {
			x.Choices = append(x.Choices, "recomputation: each replica its own where that runs its share faster (a type short of memory recomputes to hold larger micro-batches; a roomier one need not)")
		}
	}
	if n.shares == "even" {
		x.Choices = append(x.Choices, "batch: split evenly over the replicas (it simulated faster than the shares that even out the estimated times)")
	}
	var worst struct {
		mem, frac float64
	}
	for s, r := range p.Stages {
		note := StageNote{Stage: s, Layers: r}
		stageMax, memFrac := stageLoad(sim, s)
		capMin := e.m.Layers
		for _, k := range n.kinds {
			capMin = min(capMin, k.caps[s])
			pc, of := k.pcs[s], ""
			if mb, rc := kindSettings(p, k.place); mb != p.MicroBatch || rc != p.Recompute {
				q := *p
				q.MicroBatch, q.Recompute = mb, rc
				pc, of = e.cost(k.place[s].GPU, k.place[s].TP, &q), fmt.Sprintf(" of %d", mb)
				if rc != p.Recompute {
					of += ", recompute " + rc
				}
			}
			note.Kinds = append(note.Kinds, fmt.Sprintf("%s tp %d: %.1f ms a micro-batch%s", k.place[s].GPU, k.place[s].TP, 1e3*stageTime(pc, r.Count(), s, p.PP()), of))
		}
		why := fmt.Sprintf("%d layers", r.Count())
		switch {
		case s == 0 && p.PP() > 1:
			why += " with the embedding"
		case s == p.PP()-1 && p.PP() > 1:
			why += " with the final norm and head"
		}
		why += fmt.Sprintf("; memory allows at most %d here", capMin)
		note.LayersWhy = why
		note.Binding = stageBinding(e.m, r.Count(), capMin, memFrac, stageMax, sim)
		if memFrac > worst.mem {
			worst.mem = memFrac
		}
		x.Stages = append(x.Stages, note)
	}
	x.Binding = overallBinding(worst.mem, sim)
	return x
}

// stageLoad is stage s's slowest micro-batch (forward and backward) and
// the fullest of its GPUs, as a fraction of the GPU's memory.
func stageLoad(sim *train.Result, s int) (stageMax, memFrac float64) {
	for _, st := range sim.Stages {
		if st.Stage == s {
			stageMax = math.Max(stageMax, st.ForwardS+st.BackwardS)
			memFrac = math.Max(memFrac, st.Memory.Total/st.CapacityBytes)
		}
	}
	return stageMax, memFrac
}

// stageBinding is what binds a stage of n layers that memory caps at
// capMin, its fullest GPU at memFrac, its slowest micro-batch stageMax.
func stageBinding(m *train.Model, n, capMin int, memFrac, stageMax float64, sim *train.Result) string {
	switch {
	case (n == capMin && capMin < m.Layers) || memFrac > 0.9:
		return fmt.Sprintf("memory: %.0f %% of the GPU used", 100*memFrac)
	case sim.Bubble > 0.25:
		return fmt.Sprintf("bubble: the pipeline idles %.0f %% of the iteration", 100*sim.Bubble)
	}
	return fmt.Sprintf("compute: %.1f ms a micro-batch", 1e3*stageMax)
}

// overallBinding is the plan's binding constraint, its fullest GPU at
// mem of its memory.
func overallBinding(mem float64, sim *train.Result) string {
	sync := 0.0
	for _, st := range sim.Stages {
		sync = math.Max(sync, st.SyncS)
	}
	switch {
	case mem > 0.9:
		return fmt.Sprintf("memory (%.0f %% of the fullest GPU)", 100*mem)
	case sync > 0.1*sim.IterationS:
		return fmt.Sprintf("link (gradient reduction left exposed: %.0f %% of the iteration)", 100*sync/sim.IterationS)
	case sim.Bubble > 0.2:
		return fmt.Sprintf("bubble (%.0f %% idle)", 100*sim.Bubble)
	}
	return "compute"
}

// kindSettings is the micro-batch and recomputation of the first of p's
// replicas placed as place (the plan's when none is).
func kindSettings(p *train.Plan, place []train.Placement) (int, string) {
	for r, rep := range p.Replicas {
		if slices.Equal(rep.Stages, place) {
			return p.Micro(r), p.RecomputeOf(r)
		}
	}
	return p.MicroBatch, p.Recompute
}

// explainSeed explains a plan taken from a baseline's search.
func explainSeed(e *evaluator, res *Result, seed seedNote) *Explain {
	p, sim := res.Plan, res.Sim
	x := &Explain{Binding: "compute"}
	x.Choices = append(x.Choices, fmt.Sprintf("the %s baseline's plan, searched first as a seed: none of the %d simulated plans beat it for the %s objective", seed.planner, res.Evaluated, e.o.Objective),
		"stage boundaries: the baseline's (then moved a layer at a time while the simulator improved)")
	for s, r := range p.Stages {
		note := StageNote{Stage: s, Layers: r, LayersWhy: fmt.Sprintf("%d layers: %s's split, a stage costing as its slowest GPU", r.Count(), seed.planner)}
		kinds := map[string]bool{}
		for _, rep := range p.Replicas {
			if k := fmt.Sprintf("%s tp %d", rep.Stages[s].GPU, rep.Stages[s].TP); !kinds[k] {
				kinds[k] = true
				note.Kinds = append(note.Kinds, k)
			}
		}
		if p.StageDP() {
			for _, r := range p.Groups[s].Ranks {
				note.Kinds = append(note.Kinds, fmt.Sprintf("%d× %s tp %d taking %d of each micro-batch", r.Count, r.GPU, r.TP, r.Share))
			}
		}
		_, memFrac := stageLoad(sim, s)
		note.Binding = "compute"
		if memFrac > 0.9 {
			note.Binding = fmt.Sprintf("memory: %.0f %% of the GPU used", 100*memFrac)
			x.Binding = "memory"
		}
		x.Stages = append(x.Stages, note)
	}
	return x
}

// mixed tries replicas whose first stages run on one type and the rest on
// another (Sailor's and Metis's heterogeneous pipelines): for each
// ordered pair of types, each pair of the types' TP degrees, and the stage counts that
// use the two types' GPUs in proportion; alone, and with the GPUs they
// leave as replicas of one type.
func mixed(e *evaluator, base *train.Plan, perType [][]kind, alts map[string][]string) {
	c, m := e.c, e.m
	types := c.Types()
	pp := base.PP()
	if len(types) < 2 || pp < 2 {
		return
	}
	// every TP of each type: a type's best TP in a pipeline of its own
	// is not its best on a share of a mixed one (fewer stages, another
	// memory cap), nor is its largest
	for i := range types {
		for j := range types {
			if i == j {
				continue
			}
			for _, tx := range tpOptions(m, c, types[i]) {
				for _, ty := range tpOptions(m, c, types[j]) {
					if e.expired() {
						return
					}
					mixedPair(e, base, perType, alts, i, j, tx, ty)
				}
			}
		}
	}
}

// mixedPair tries the replicas of x's stages (tp tx) then y's (tp ty).
func mixedPair(e *evaluator, base *train.Plan, perType [][]kind, alts map[string][]string, i, j, tx, ty int) {
	c := e.c
	types := c.Types()
	pp := base.PP()
	x, y := types[i], types[j]
	nx, ny := float64(c.GPUs(x)), float64(c.GPUs(y))
	k0 := float64(pp) * nx * float64(ty) / (nx*float64(ty) + ny*float64(tx))
	seen := map[int]bool{}
	for _, k := range []int{int(math.Floor(k0)), int(math.Ceil(k0))} {
		if k < 1 || k > pp-1 || seen[k] {
			continue
		}
		seen[k] = true
		place := append(pure(x, tx, k), pure(y, ty, pp-k)...)
		avail := min(c.GPUs(x)/(k*tx), c.GPUs(y)/((pp-k)*ty))
		if avail == 0 {
			continue
		}
		mk := newKind(e, base, place, avail)
		if mk.counts == nil {
			continue
		}
		combine(e, base, []kind{mk}, alts)
		ks := []kind{mk}
		for t, name := range types {
			first := firstWithoutCP(perType[t])
			if first == nil {
				continue
			}
			left := c.GPUs(name) - avail*mk.per[name]
			pk := *first
			pk.avail = left / pk.gpus()
			if pk.avail > 0 {
				ks = append(ks, pk)
			}
		}
		if len(ks) > 1 {
			combine(e, base, ks, alts)
		}
	}
}

// hopeless reports whether plan p of the kinds cannot beat the best plan
// so far even by its optimistic estimate: each replica's stages at their
// parts' costs, the first micro-batch through every stage and the rest at
// the slowest stage's pace, with no transfers, gradient reduction or
// optimizer step (all of which the simulator adds). Only for the
// throughput and time objectives.
func (e *evaluator) hopeless(p *train.Plan, ks []kind) bool {
	if e.best == nil || e.o.Objective == "cost" {
		return false
	}
	P := p.PP()
	iter := 0.0
	ts := make([]float64, P)
	for ri, r := range p.Replicas {
		if ri > 0 && r.Batch == p.Replicas[ri-1].Batch && slices.Equal(r.Stages, p.Replicas[ri-1].Stages) {
			continue
		}
		var k *kind
		for i := range ks {
			if slices.Equal(ks[i].place, r.Stages) {
				k = &ks[i]
				break
			}
		}
		if k == nil {
			return false
		}
		for s, st := range p.Stages {
			ts[s] = stageTime(k.pcs[s], st.Count(), s, P)
		}
		iter = math.Max(iter, replicaTime(ts, r.Batch/p.MicroBatch))
	}
	return float64(p.GlobalBatch)*float64(e.m.Seq)/iter < e.score
}

// beyondReach reports whether the kinds cannot beat the best plan so far
// on any split: each replica at best runs a micro-batch per its own
// balanced split's slowest stage (a split within tighter caps is no
// faster), with no pipeline fill, transfers or reduction; a 10 % margin
// covers the balance's rounding and the refinement's moves. Only for the
// throughput and time objectives; it saves building the splits of kinds
// far behind.
func (e *evaluator) beyondReach(base *train.Plan, ks []kind) bool {
	if e.best == nil || e.o.Objective == "cost" {
		return false
	}
	mbs := 0.0 // micro-batches a second, all replicas together
	for _, k := range ks {
		mbs += float64(k.avail) * k.rate * float64(k.gpus())
	}
	return 1.1*mbs*float64(base.MicroBatch)*float64(e.m.Seq) < e.score
}

// bestKinds keeps a type's two best kinds without context parallelism
// and its best kind with it, by throughput per GPU, best first.
func bestKinds(ks []kind) []kind {
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].rate > ks[j].rate })
	var out []kind
	plain, withCP := 0, 0
	for _, k := range ks {
		switch {
		case k.cp <= 1 && plain < 2:
			plain++
		case k.cp > 1 && withCP < 1:
			withCP++
		default:
			continue
		}
		out = append(out, k)
	}
	return out
}

// firstWithoutCP is the best of a type's kinds without context
// parallelism (heterogeneous pipelines are built without it), or nil.
func firstWithoutCP(ks []kind) *kind {
	for i := range ks {
		if ks[i].cp <= 1 {
			return &ks[i]
		}
	}
	return nil
}

// cpOptions are the context-parallel degrees tried: 1, and on long
// sequences (4096 tokens or more) 2, 4 and 8 where each rank keeps at
// least 1024 tokens and the sequence splits into Megatron-LM's 2 × cp
// load-balanced chunks.
func cpOptions(m *train.Model) []int {
	out := []int{1}
	for cp := 2; cp <= 8 && m.Seq >= 4096; cp *= 2 {
		if m.Seq/cp >= 1024 && m.Seq%(2*cp) == 0 {
			out = append(out, cp)
		}
	}
	return out
}

// cpNote is ", cp N" for a plan with context parallelism, else empty.
func cpNote(p *train.Plan) string {
	if p.ContextParallel() > 1 {
		return fmt.Sprintf(", cp %d", p.CP)
	}
	return ""
}
