package goodput

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/inlay-dev/inlay/cluster/sia"
)

// Part is the GPUs of one type in an allocation.
type Part struct {
	Type  int `json:"type"` // index into the cluster's GPU types
	GPUs  int `json:"gpus"`
	Nodes int `json:"nodes"`
}

// Alloc is a job's allocation: one part per GPU type it holds, sorted by
// type. More than one part is a mixed-type gang.
type Alloc []Part

// GPUs is the allocation's GPU count.
func (a Alloc) GPUs() int {
	n := 0
	for _, p := range a {
		n += p.GPUs
	}
	return n
}

// Nodes is the servers it spans.
func (a Alloc) Nodes() int {
	n := 0
	for _, p := range a {
		n += p.Nodes
	}
	return n
}

// Equal reports whether a and b hold the same counts of the same types.
func (a Alloc) Equal(b Alloc) bool { return slices.Equal(a, b) }

// Sorted returns a with its parts ordered by type.
func (a Alloc) Sorted() Alloc {
	sort.Slice(a, func(i, k int) bool { return a[i].Type < a[k].Type })
	return a
}

// Model is one model's throughput fits per GPU type and its efficiency.
type Model struct {
	Name string
	// Fits by the cluster's type index; nil where it was not profiled.
	Fits []*Fit
	Eff  *Efficiency
	// Slowdown multiplies every step time (the simulator's calibration).
	Slowdown float64
	// Restart is the checkpoint-restore delay in seconds.
	Restart float64
	// Planned, when set, is the samples a second the job makes on an
	// allocation (0: it cannot run there), single-type or mixed, from the
	// training planner (a job given as a model): it sets every step time
	// in place of the fits, which then only say where the model runs.
	Planned func(a Alloc) float64
}

// NewPlanned is the model of a job given as a model: it runs Steps steps
// of its global batch, each step's time from rate (samples a second on an
// allocation), on the types where runs is true; restart is its
// checkpoint-restore delay in seconds. Progress is in steps.
func NewPlanned(name string, batch, steps float64, runs []bool, restart float64, rate func(Alloc) float64) *Model {
	m := &Model{Name: name, Slowdown: 1, Restart: restart, Planned: rate, Eff: FixedEfficiency(batch, steps)}
	for _, ok := range runs {
		var f *Fit
		if ok {
			f = &Fit{Gamma: 1, MinLocal: 1, MaxLocal: batch}
		}
		m.Fits = append(m.Fits, f)
	}
	return m
}

// Split says how a mixed-type gang divides its batch.
type Split int

const (
	// Proportional gives each GPU type a local batch that equalises the
	// compute time of its replicas.
	Proportional Split = iota
	// Even gives every replica the same local batch: the slowest type
	// sets the step.
	Even
)

// NewModel fits model m's profiles on the cluster's types.
func NewModel(b *sia.Bench, m *sia.Model, c *sia.Cluster) (*Model, error) {
	out := &Model{Name: m.Name, Slowdown: 1, Restart: c.Rescale(m.Name)}
	if s, ok := c.Calibration.Slowdowns[m.Name]; ok {
		out.Slowdown = s
	}
	ep, ok := c.MaxEpochs[m.Name]
	if !ok {
		return nil, fmt.Errorf("%s: model %s has no max_epochs", b.Dir+"/cluster.json", m.Name)
	}
	var err error
	if out.Eff, err = NewEfficiency(m, ep); err != nil {
		return nil, err
	}
	any := false
	for _, t := range c.NodeTypes {
		p, ok := m.Profiles[t.Suffix]
		if !ok {
			out.Fits = append(out.Fits, nil)
			continue
		}
		f, err := FitSamples(append(append([]sia.Sample(nil), p.Placements...), p.Scalability...))
		if err != nil {
			return nil, fmt.Errorf("model %s on %s: %v", m.Name, t.Suffix, err)
		}
		out.Fits = append(out.Fits, f)
		any = true
	}
	if !any {
		return nil, fmt.Errorf("model %s: no profile on any GPU type of the cluster", m.Name)
	}
	return out, nil
}

// Knowledge is what an estimator knows of a job's scaling.
type Knowledge struct {
	// Multi has bit t set when the job has run on several GPUs of type t,
	// whose synchronisation model is then known. On a type without the bit
	// the estimator borrows the lowest known type's synchronisation model,
	// and with none known it assumes perfect scaling (Sia's bootstrap).
	Multi uint64
	// Agnostic, when ≥ 0, is the type whose model a heterogeneity-unaware
	// estimator (Pollux's) uses for every type.
	Agnostic int
	// Exact: the estimator knows the true model.
	Exact bool
}

// Truth is the knowledge of the simulator itself.
var Truth = Knowledge{Agnostic: -1, Exact: true}

// fitFor is the fit an estimator with knowledge k uses for type t.
func (m *Model) fitFor(t int, k Knowledge) *Fit {
	if k.Exact {
		return m.Fits[t]
	}
	if k.Agnostic >= 0 && m.Fits[k.Agnostic] != nil {
		return m.Fits[k.Agnostic]
	}
	f := m.Fits[t]
	if f == nil || k.Multi&(1<<uint(t)) != 0 {
		return f
	}
	g := *f
	g.AlphaN, g.BetaN, g.AlphaR, g.BetaR = 0, 0, 0, 0
	for u := range m.Fits {
		if k.Multi&(1<<uint(u)) != 0 && m.Fits[u] != nil {
			s := m.Fits[u]
			g.AlphaN, g.BetaN, g.AlphaR, g.BetaR, g.Gamma = s.AlphaN, s.BetaN, s.AlphaR, s.BetaR, s.Gamma
			break
		}
	}
	return &g
}

// Runs reports whether the model can run on every type of a.
func (m *Model) Runs(a Alloc) bool {
	for _, p := range a {
		if p.Type < 0 || p.Type >= len(m.Fits) || m.Fits[p.Type] == nil || p.GPUs < 1 {
			return false
		}
	}
	return len(a) > 0
}

// Step is the time of one optimizer step at total batch M on a (+Inf
// where the model cannot run there).
func (m *Model) Step(a Alloc, M float64, k Knowledge, split Split) float64 {
	if !m.Runs(a) || !(M > 0) {
		return math.Inf(1)
	}
	if m.Planned != nil {
		r := m.Planned(a)
		if !(r > 0) {
			return math.Inf(1)
		}
		return m.Slowdown * M / r
	}
	if len(a) == 1 {
		f := m.fitFor(a[0].Type, k)
		local, acc := f.Split(M, a[0].GPUs)
		return m.Slowdown * f.Step(a[0].GPUs, a[0].Nodes, local, acc)
	}
	fits := make([]*Fit, len(a))
	n, cap, gamma, sync := 0, 0.0, 1.0, 0.0
	for i, p := range a {
		fits[i] = m.fitFor(p.Type, k)
		n += p.GPUs
		cap += float64(p.GPUs) * fits[i].MaxLocal
		gamma = math.Max(gamma, fits[i].Gamma)
	}
	nodes := max(a.Nodes(), 2) // two types are two servers at least
	for _, f := range fits {
		sync = math.Max(sync, f.Sync(n, nodes))
	}
	acc := max(int(math.Ceil(M/cap))-1, 0)
	per := M / float64(acc+1) // samples per micro-step over the gang
	var c float64
	if split == Even {
		for _, f := range fits {
			c = math.Max(c, f.Compute(per/float64(n)))
		}
	} else {
		c = equalise(a, fits, per)
	}
	return m.Slowdown * (float64(acc)*c + combine(c, sync, gamma))
}

// equalise finds the compute time C at which Σ n_t·m_t(C) = per, with
// m_t(C) = (C − α_t)/β_t clamped to [0, MaxLocal_t]: solve the linear
// equation over the unclamped types, clamp the types it pushes out of
// range, and solve again (at most once per type).
func equalise(a Alloc, fits []*Fit, per float64) float64 {
	const maxParts = 8
	var state [maxParts]int8 // 0 free, 1 at MaxLocal, -1 at 0
	if len(a) > maxParts {
		return math.Inf(1)
	}
	c := 0.0
	for range len(a) + 1 {
		rest, num, den := per, 0.0, 0.0
		for i, f := range fits {
			n := float64(a[i].GPUs)
			switch {
			case state[i] == 1:
				rest -= n * f.MaxLocal
			case state[i] == 0 && f.BetaC > 0:
				num += n * f.AlphaC / f.BetaC
				den += n / f.BetaC
			}
		}
		if den == 0 {
			for i, f := range fits { // every type clamped: the slowest sets it
				if state[i] == 1 {
					c = math.Max(c, f.Compute(f.MaxLocal))
				}
			}
			return c
		}
		c = (math.Max(rest, 0) + num) / den
		changed := false
		for i, f := range fits {
			if state[i] != 0 || f.BetaC <= 0 {
				continue
			}
			m := (c - f.AlphaC) / f.BetaC
			if m > f.MaxLocal {
				state[i], changed = 1, true
			} else if m < 0 {
				state[i], changed = -1, true
			}
		}
		if !changed {
			break
		}
	}
	for i, f := range fits { // a clamped type may be the slowest
		if state[i] == 1 {
			c = math.Max(c, f.Compute(f.MaxLocal))
		}
	}
	return c
}

// Goodput is the progress per second at total batch M and progress p.
func (m *Model) Goodput(a Alloc, M, p float64, k Knowledge, split Split) float64 {
	s := m.Step(a, M, k, split)
	if math.IsInf(s, 1) || !(s > 0) {
		return 0
	}
	return m.Eff.Gain(M, p) / s
}

// BatchRange is the total batch sizes an adaptive job may use on a: from
// the initial batch size up to the largest profiled one, and at least one
// sample per GPU.
func (m *Model) BatchRange(a Alloc) (lo, hi float64) {
	lo, hi = m.Eff.M0, m.Eff.MaxBatch
	if n := float64(a.GPUs()); hi < n {
		hi = n
	}
	return lo, hi
}

// BestBatch is the batch size in [lo, hi] with the most goodput on a
// (searched over a geometric grid of 24 points and both ends), and that
// goodput.
func (m *Model) BestBatch(a Alloc, lo, hi, p float64, k Knowledge, split Split) (M, g float64) {
	if hi < lo {
		hi = lo
	}
	const steps = 24
	for i := 0; i <= steps; i++ {
		b := lo * math.Pow(hi/lo, float64(i)/steps)
		if v := m.Goodput(a, b, p, k, split); v > g {
			M, g = b, v
		}
	}
	return M, g
}

// LocalBatches is each part's per-GPU share of total batch M on a (samples
// a GPU contributes to one optimizer step, accumulation included), as Step
// divides it: an even share on one type, a planned model or an Even split;
// under a Proportional split each type's local batch equalises the compute
// time of the replicas. The shares times the parts' GPUs sum to M.
func (m *Model) LocalBatches(a Alloc, M float64, k Knowledge, split Split) []float64 {
	out := make([]float64, len(a))
	n := float64(a.GPUs())
	for i := range out {
		out[i] = M / n
	}
	if len(a) < 2 || m.Planned != nil || split == Even || !m.Runs(a) || !(M > 0) {
		return out
	}
	fits := make([]*Fit, len(a))
	cap := 0.0
	for i, p := range a {
		fits[i] = m.fitFor(p.Type, k)
		cap += float64(p.GPUs) * fits[i].MaxLocal
	}
	acc := max(int(math.Ceil(M/cap))-1, 0)
	c := equalise(a, fits, M/float64(acc+1))
	sum := 0.0
	for i, f := range fits {
		b := f.MaxLocal
		if f.BetaC > 0 {
			b = math.Min(math.Max((c-f.AlphaC)/f.BetaC, 0), f.MaxLocal)
		}
		out[i] = b
		sum += b * float64(a[i].GPUs)
	}
	if !(sum > 0) {
		for i := range out {
			out[i] = M / n
		}
		return out
	}
	for i := range out {
		out[i] *= M / sum
	}
	return out
}
