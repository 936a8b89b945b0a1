package planner

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/inlay-dev/inlay/train"
)

// maxOwnMicro is the largest micro-batch a replica of its own is given.
const maxOwnMicro = 16

// microTable is what one kind's replica costs with each batch share on a
// split when it picks its own micro-batch and recomputation: time[n] the
// estimated time of n sequences (the fastest over the micro-batches that
// divide n and the recomputations with which they fit), micro[n] and
// recompute[n] the setting that gives it.
type microTable struct {
	time      []float64
	micro     []int
	recompute []string
	// low[n] is the least time of any share of n sequences or more: the
	// largest share within a time T is the last n with low[n] ≤ T.
	low []float64
}

// microFit checks whether a replica of kind k runs micro-batches of d
// sequences on the split within its GPUs' memory, with the most
// micro-batches in flight the schedule keeps (pp − s on stage s) and the
// optimizer states sharded over D replicas: one template plan of D
// replicas, reused for every setting.
type microFit struct {
	e    *evaluator
	q    train.Plan
	k    *kind
	gpus []train.GPU // of each stage
}

func newMicroFit(e *evaluator, base *train.Plan, counts []int, k *kind, D int) *microFit {
	f := &microFit{e: e, q: *base, k: k}
	f.q.Stages = ranges(counts)
	f.q.Replicas = make([]train.Replica, max(D, 1))
	for i := range f.q.Replicas {
		f.q.Replicas[i] = train.Replica{Stages: k.place}
	}
	for _, pl := range k.place {
		g, _ := e.c.GPUType(pl.GPU)
		f.gpus = append(f.gpus, g)
	}
	return f
}

// fits reports whether micro-batches of d fit with recomputation rc.
func (f *microFit) fits(rc string, d int) bool {
	f.q.Recompute, f.q.MicroBatch = rc, d
	for i := range f.q.Replicas {
		f.q.Replicas[i].Batch = d * len(f.q.Stages)
	}
	for s, pl := range f.k.place {
		if train.StageMemory(f.e.m, &f.q, s, &f.gpus[s], pl.TP).Total > f.gpus[s].MemoryBytes() {
			return false
		}
	}
	return true
}

// recomputes are the recomputations a replica may run, rc (the plan's)
// first.
func recomputes(rc string) []string {
	out := []string{rc}
	for _, x := range recomputations {
		if x != rc {
			out = append(out, x)
		}
	}
	return out
}

// newMicroTable prices kind k's replica on the split for every share up
// to B sequences, each with its best micro-batch of 1 to maxOwnMicro and
// its best recomputation: a type short of memory recomputes to run larger
// micro-batches while a roomier one need not (at equal times, the kind's
// own). The tables are cached: a kind meets the same split in many
// combinations.
func newMicroTable(e *evaluator, base *train.Plan, counts []int, k *kind, B, D int, ownRC bool) *microTable {
	key := fmt.Sprint(k.place, k.rc, ownRC, base.ContextParallel(), base.Recompute, base.Zero, base.Precision, base.Offload, counts, B, D)
	if t, ok := e.micros[key]; ok {
		return t
	}
	P := len(counts)
	t := &microTable{time: make([]float64, B+1), micro: make([]int, B+1), recompute: make([]string, B+1), low: make([]float64, B+1)}
	for n := 1; n <= B; n++ {
		t.time[n] = math.Inf(1)
	}
	rc0 := base.Recompute
	if k.rc != "" {
		rc0 = k.rc
	}
	st := make([]float64, P) // stage times per micro-batch of d
	fit := newMicroFit(e, base, counts, k, D)
	rcs := []string{rc0}
	if ownRC {
		rcs = recomputes(rc0)
	}
	for _, rc := range rcs {
		q := *base
		q.Recompute = rc
		for d := 1; d <= min(maxOwnMicro, B); d++ {
			if !fit.fits(rc, d) {
				break
			}
			q.MicroBatch = d
			for s, n := range counts {
				st[s] = stageTime(e.cost(k.place[s].GPU, k.place[s].TP, &q), n, s, P)
			}
			for n := d; n <= B; n += d {
				if x := replicaTime(st, n/d); x < t.time[n] {
					t.time[n], t.micro[n], t.recompute[n] = x, d, rc
				}
			}
		}
	}
	t.low[B] = t.time[B]
	for n := B - 1; n >= 0; n-- {
		t.low[n] = math.Min(t.time[n], t.low[n+1])
	}
	e.micros[key] = t
	return t
}

// ownReach is about the most sequences a second kind k's replicas run on
// the split with micro-batches and recomputation of their own: every
// replica at its best rate over the power-of-two micro-batches up to
// maxOwnMicro, without recomputation and whether or not they fit, with
// no pipeline fill. It spares far kinds their tables.
func ownReach(e *evaluator, base *train.Plan, counts []int, k *kind) float64 {
	q := *base
	q.Recompute = "none"
	best := 0.0
	for d := 1; d <= maxOwnMicro; d *= 2 { // a GPU's rate grows with its micro-batch, to a plateau
		q.MicroBatch = d
		slowest := 0.0
		for s, n := range counts {
			slowest = math.Max(slowest, stageTime(e.cost(k.place[s].GPU, k.place[s].TP, &q), n, s, len(counts)))
		}
		best = math.Max(best, float64(d)/slowest)
	}
	return best * float64(k.avail)
}

// most is the largest share whose time is within T.
func (t *microTable) most(T float64) int {
	return sort.Search(len(t.low), func(n int) bool { return t.low[n] > T }) - 1
}

// ownMicro builds the plan of the kinds on a split in which every
// replica runs its batch share in micro-batches of its own: a fast GPU's
// replica takes a larger share in larger micro-batches (fewer, better
// filled kernels) while a small GPU's keeps the micro-batch its memory
// holds. Shares are set so that the slowest replica's estimated time is
// least. With ownRC each replica also picks its recomputation (else its
// kind's). It returns nil when the kinds cannot take the batch or the
// estimate cannot beat the best plan so far.
func ownMicro(e *evaluator, base *train.Plan, counts []int, ks []kind, ownRC bool) *train.Plan {
	B := e.o.GlobalBatch
	if B > 1<<14 || base.Schedule.Kind != "1f1b" {
		return nil
	}
	if e.best != nil && e.o.Objective != "cost" {
		reach := 0.0
		for i := range ks {
			reach += ownReach(e, base, counts, &ks[i])
		}
		if reach*float64(e.m.Seq) < e.score {
			return nil // out of reach even so
		}
	}
	D := 0
	for _, k := range ks {
		D += k.avail
	}
	tabs := make([]*microTable, len(ks))
	hi := math.Inf(1) // one replica taking the batch alone
	for i := range ks {
		tabs[i] = newMicroTable(e, base, counts, &ks[i], B, D, ownRC)
		hi = math.Min(hi, tabs[i].time[B])
	}
	if math.IsInf(hi, 1) {
		return nil
	}
	total := func(T float64) int {
		n := 0
		for i, k := range ks {
			n += k.avail * max(tabs[i].most(T), 0)
		}
		return n
	}
	if total(hi) < B {
		return nil
	}
	hi = leastWithin(hi, func(T float64) bool { return total(T) >= B })
	if e.best != nil && e.o.Objective != "cost" && float64(B)*float64(e.m.Seq)/hi < e.score {
		return nil // hopeless by the optimistic estimate
	}
	share := make([][]int, len(ks))
	for i, k := range ks {
		share[i] = make([]int, k.avail)
		for r := range share[i] {
			share[i][r] = max(tabs[i].most(hi), 0)
		}
	}
	// take the surplus off the slowest replica a step at a time (the
	// least it can give up while staying within hi), spreading it over
	// the replicas rather than idling one
	surplus := total(hi) - B
	for surplus > 0 {
		bi, br, bt := -1, -1, math.Inf(-1)
		for i := range ks {
			for r, n := range share[i] {
				if n > 0 && tabs[i].time[n] > bt {
					bi, br, bt = i, r, tabs[i].time[n]
				}
			}
		}
		if bi < 0 {
			break
		}
		n, x := share[bi][br], 1
		for ; x <= min(surplus, n); x++ {
			if tabs[bi].time[n-x] <= hi || n == x {
				break
			}
		}
		if x > min(surplus, n) {
			break
		}
		share[bi][br] -= x
		surplus -= x
	}
	// what the slowest could not give up, the first replicas that can
	for i := range ks {
		for r := range share[i] {
			for x := min(surplus, share[i][r]); x > 0; x-- {
				if n := share[i][r] - x; tabs[i].time[n] <= hi || n == 0 {
					share[i][r] = n
					surplus -= x
					break
				}
			}
		}
	}
	if surplus != 0 {
		return nil
	}
	// the plan's micro-batch is the one most replicas run
	uses := map[int]int{}
	for i := range ks {
		for _, n := range share[i] {
			if n > 0 {
				uses[tabs[i].micro[n]]++
			}
		}
	}
	common := 0
	for d, u := range uses {
		if common == 0 || u > uses[common] || (u == uses[common] && d < common) {
			common = d
		}
	}
	b := *base
	b.MicroBatch = common
	return withShares(&b, counts, ks, share, func(i, n int) train.Replica {
		r := train.Replica{Batch: n}
		if d := tabs[i].micro[n]; d != common {
			r.MicroBatch = d
		}
		return train.Replica{Batch: n, MicroBatch: r.MicroBatch, Recompute: tabs[i].recompute[n]}
	})
}

// leastWithin bisects [0, hi] for the least T with ok(T) (ok(hi) holds,
// ok is monotone), to 60 halvings.
func leastWithin(hi float64, ok func(float64) bool) float64 {
	lo := 0.0
	for it := 0; it < 60; it++ {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// refineShares moves sequences between the best plan's kinds of replica
// (replicas alike in placement, batch and micro-batch) and tries each
// kind's other micro-batches, while the simulator says it helps. The
// split above is set by estimates that leave out the gradient reduction
// the last backward hides and the optimizer step, both of which favour
// fewer, larger micro-batches on the fast type; the simulator has them.
// A transfer moves the least whole amount both kinds can share evenly
// (lcm of their counts), each replica of one giving as many sequences as
// each of the other takes, divided by their counts.
func refineShares(e *evaluator) {
	for round := 0; round < 16 && e.best != nil && !e.expired(); round++ {
		best := e.best
		if best.StageDP() || best.Schedule.Kind != "1f1b" || best.GlobalBatch > 1<<14 {
			return
		}
		kinds := replicaKinds(best)
		before := e.score
		for _, k := range kinds {
			n := best.Replicas[k[0]].Batch
			for d := 1; d <= min(n, maxOwnMicro) && !e.expired(); d++ {
				if n%d == 0 && d != best.Micro(k[0]) {
					e.try(withKind(best, k, n, d), e.note)
				}
			}
		}
		for i, a := range kinds {
			for j, b := range kinds {
				if i == j || e.expired() {
					continue
				}
				t := lcm(len(a), len(b))
				na, nb := best.Replicas[a[0]].Batch-t/len(a), best.Replicas[b[0]].Batch+t/len(b)
				if na < 1 {
					continue
				}
				for _, da := range microsFor(na, best.Micro(a[0])) {
					q := withKind(best, a, na, da)
					for _, db := range microsFor(nb, best.Micro(b[0])) {
						e.try(withKind(q, b, nb, db), e.note)
					}
				}
			}
		}
		if !(e.score > before) {
			return
		}
	}
}

// replicaKinds groups a plan's replicas by placement, batch,
// micro-batch and recomputation, in the order they first appear.
func replicaKinds(p *train.Plan) [][]int {
	var out [][]int
	for r := range p.Replicas {
		found := false
		for i, k := range out {
			q := p.Replicas[k[0]]
			if q.Batch == p.Replicas[r].Batch && p.Micro(k[0]) == p.Micro(r) && p.RecomputeOf(k[0]) == p.RecomputeOf(r) && slices.Equal(q.Stages, p.Replicas[r].Stages) {
				out[i] = append(out[i], r)
				found = true
				break
			}
		}
		if !found {
			out = append(out, []int{r})
		}
	}
	return out
}

// withKind is p with the replicas of kind k at batch n in micro-batches
// of d.
func withKind(p *train.Plan, k []int, n, d int) *train.Plan {
	q := *p
	q.Replicas = slices.Clone(p.Replicas)
	for _, r := range k {
		q.Replicas[r].Batch = n
		q.Replicas[r].MicroBatch = d
		if d == q.MicroBatch {
			q.Replicas[r].MicroBatch = 0
		}
	}
	return &q
}

// microsFor are the micro-batches tried for a share of n that ran d:
// the largest divisor of n up to d (as much memory as before at most),
// and the largest up to maxOwnMicro when that is another.
func microsFor(n, d int) []int {
	most := func(hi int) int {
		for x := min(n, hi); x > 1; x-- {
			if n%x == 0 {
				return x
			}
		}
		return 1
	}
	a, b := most(d), most(maxOwnMicro)
	if a == b {
		return []int{a}
	}
	return []int{a, b}
}

// lcm is the least common multiple of a and b.
func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
