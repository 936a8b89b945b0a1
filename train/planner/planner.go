// Package planner searches training plans (train.Plan) for a model on a
// cluster of unlike GPUs: which GPUs to use, data, tensor and pipeline
// parallelism, uneven stages, per-stage GPU type and TP, unlike replicas
// with their own batch shares, micro-batch, recomputation and ZeRO. Every
// plan is judged by part 1's simulator (train.Simulate) and must fit its
// memory model. The planners are named in an explicit registry
// (Registry): inlay, and the baselines megatron, metis and amp.
package planner

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/internal/named"
	"github.com/inlay-dev/inlay/train"
)

// Options are the job's goal and limits.
type Options struct {
	// Objective is throughput (tokens/s), cost (dollars per token, with
	// Prices) or time (hours to TokenBudget; the fastest plan).
	Objective string
	// GlobalBatch fixes the sequences per iteration (0: about 2M tokens,
	// DefaultGlobalBatch; for a graph network, samples: 32 a GPU, at
	// least 256).
	GlobalBatch int
	// MaxGPUs caps the GPUs used (0: no cap); MaxDollarsPerHour the price
	// of those used (0: no cap; needs Prices).
	MaxGPUs           int
	MaxDollarsPerHour float64
	// Prices are dollars per GPU-hour by type name.
	Prices map[string]float64
	// TokenBudget is the tokens to train, for the time objective.
	TokenBudget float64
	// Budget bounds the search's wall time (0: the planner's default).
	// The best plan found by then is returned.
	Budget time.Duration
}

// DefaultGlobalBatch is about two million tokens a batch, at least one
// sequence.
func DefaultGlobalBatch(m *train.Model) int { return max(1, (1<<21)/max(m.Seq, 1)) }

// StageNote says why a stage is as it is.
type StageNote struct {
	Stage  int              `json:"stage"`
	Layers train.LayerRange `json:"layers"`
	// Why these layers; why this GPU type and TP (per replica kind).
	LayersWhy string   `json:"layers_why"`
	Kinds     []string `json:"kinds"`
	// Binding names the constraint that binds this stage: memory, link,
	// bubble or compute; with the figures.
	Binding string `json:"binding"`
}

// Explain is what the planner recorded while planning.
type Explain struct {
	// Choices are the search's decisions, in order.
	Choices []string    `json:"choices"`
	Stages  []StageNote `json:"stages"`
	// Binding is the plan's binding constraint overall.
	Binding string `json:"binding"`
}

// Result is a planner's answer.
type Result struct {
	Planner string
	Plan    *train.Plan
	Sim     *train.Result
	Bound   train.Bound
	// Search is the search's wall time; Evaluated the plans simulated.
	Search    time.Duration
	Evaluated int
	Explain   *Explain
}

// Planner searches plans.
type Planner interface {
	Name() string
	Plan(m *train.Model, c *train.Cluster, o Options) (*Result, error)
}

// Registry returns the planners by name; each call builds a new map.
func Registry() map[string]Planner {
	return map[string]Planner{
		"inlay":    Inlay{},
		"megatron": Megatron{},
		"metis":    Metis{},
		"amp":      AMP{},
	}
}

// Names lists the registry's names, sorted.
func Names() []string { return named.Names(Registry()) }

// New returns the planner called name.
func New(name string) (Planner, error) {
	return named.Lookup(named.Kind{Pkg: "planner", What: "planner", Plural: "planners"}, Registry(), strings.ToLower(name), name)
}

// check validates the options against the cluster.
func (o *Options) check(m *train.Model, c *train.Cluster) error {
	switch o.Objective {
	case "":
		o.Objective = "throughput"
	case "throughput", "time":
	case "cost":
		for _, t := range c.Types() {
			if o.Prices[t] <= 0 {
				return fmt.Errorf("planner: objective cost needs a price per GPU-hour for %s", t)
			}
		}
	default:
		return fmt.Errorf("planner: objective %q: want throughput, cost or time", o.Objective)
	}
	if o.MaxDollarsPerHour > 0 {
		for _, t := range c.Types() {
			if o.Prices[t] <= 0 {
				return fmt.Errorf("planner: a dollars-per-hour cap needs a price per GPU-hour for %s", t)
			}
		}
	}
	if o.MaxGPUs < 0 || o.MaxDollarsPerHour < 0 || o.GlobalBatch < 0 || o.TokenBudget < 0 {
		return fmt.Errorf("planner: caps, batch and budget must not be negative")
	}
	if o.GlobalBatch == 0 && m.Net != nil {
		gpus := c.GPUs("")
		if o.MaxGPUs > 0 {
			gpus = min(gpus, o.MaxGPUs)
		}
		o.GlobalBatch = graphGlobalBatch(gpus)
	}
	if o.GlobalBatch == 0 {
		o.GlobalBatch = DefaultGlobalBatch(m)
	}
	if o.GlobalBatch > 1<<20 {
		return fmt.Errorf("planner: global batch %d is too large", o.GlobalBatch)
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("planner: model %s: %v", m.Name, err)
	}
	return c.Validate()
}

// precisionFor is bf16 when every type has BF16 tensor cores, else fp16.
func precisionFor(c *train.Cluster) string {
	for _, g := range c.Groups {
		if !g.GPU.BF16 {
			return "fp16"
		}
	}
	return "bf16"
}

// recomputations are the recomputation settings, lightest first.
var recomputations = []string{"none", "selective", "full"}

// basePlan is the engine settings every planner's plans share: 1F1B,
// bucketed gradient reduction overlapped with the backward pass, sequence
// parallelism with TP, fused attention (on the types that run it: Ampere
// and newer), ring reduction.
func basePlan(c *train.Cluster, micro, global int, recompute string, zero int) *train.Plan {
	prec := precisionFor(c)
	return &train.Plan{MicroBatch: micro, GlobalBatch: global, Schedule: train.Schedule{Kind: "1f1b"}, Recompute: recompute,
		SequenceParallel: true, Zero: zero, Precision: prec, FlashAttention: true, OverlapGradReduce: true,
		BucketMB: 40, DPAlgorithm: "ring"}
}

// precision sets p's precision by the GPUs it uses: BF16 when every type
// it uses has BF16 tensor cores (Ampere and newer), else FP16 (the same
// tensor rate on those). Fused attention stays on: the simulator fuses it
// on the stages whose GPU runs it and keeps the unfused core on the
// others (a V100 replica beside A100 replicas), as each replica's engine
// picks its own attention kernel.
func (e *evaluator) precision(p *train.Plan) {
	p.Precision, p.FlashAttention = "bf16", true
	p.EachGroup(func(gpu string, _, _ int) {
		if g, ok := e.c.GPUType(gpu); ok && !g.BF16 {
			p.Precision = "fp16"
		}
	})
}

// evaluator simulates candidate plans and keeps the best under the
// objective and the caps.
type evaluator struct {
	m        *train.Model
	c        *train.Cluster
	o        Options
	deadline time.Time
	n        int
	best     *train.Plan
	bestSim  *train.Result
	score    float64
	note     any
	costs    map[costKey]train.PartCost
	// micros caches the kinds' own-micro-batch tables (newMicroTable) by
	// what they are priced on
	micros map[string]*microTable
}

func newEvaluator(m *train.Model, c *train.Cluster, o Options, def time.Duration) *evaluator {
	b := o.Budget
	if b <= 0 {
		b = def
	}
	return &evaluator{m: m, c: c, o: o, deadline: time.Now().Add(b), score: math.Inf(-1), costs: map[costKey]train.PartCost{}, micros: map[string]*microTable{}}
}

func (e *evaluator) expired() bool { return time.Now().After(e.deadline) }

// dollarsPerHour is the price of the GPUs p uses.
func dollarsPerHour(p *train.Plan, prices map[string]float64) float64 {
	d := 0.0
	p.EachGroup(func(gpu string, gpus, n int) { d += float64(gpus*n) * prices[gpu] })
	return d
}

// allowed checks the caps.
func (e *evaluator) allowed(p *train.Plan) bool {
	if e.o.MaxGPUs > 0 && p.GPUs() > e.o.MaxGPUs {
		return false
	}
	if e.o.MaxDollarsPerHour > 0 && dollarsPerHour(p, e.o.Prices) > e.o.MaxDollarsPerHour+1e-9 {
		return false
	}
	return true
}

// objective scores a simulated plan: higher is better.
func (e *evaluator) objective(p *train.Plan, r *train.Result) float64 {
	if e.o.Objective == "cost" {
		return r.TokensPerS / dollarsPerHour(p, e.o.Prices)
	}
	return r.TokensPerS
}

// try simulates p when it is allowed and fits, and keeps it when it beats
// the best; note is the planner's record of how p was made. It returns
// the result (nil when p was not simulated or does not fit).
func (e *evaluator) try(p *train.Plan, note any) *train.Result {
	e.precision(p)
	if !e.allowed(p) || p.Check(e.m) != nil || !train.Fits(e.m, e.c, p) {
		return nil
	}
	r, err := train.Simulate(e.m, e.c, p, train.Options{})
	e.n++
	if err != nil || !r.Fits {
		return nil
	}
	// at the same score, a plan of replicas beats one with per-stage data
	// parallelism: every engine runs it
	s := e.objective(p, r)
	if s > e.score*(1+1e-12) || (e.best != nil && e.best.StageDP() && !p.StageDP() && s >= e.score*(1-1e-12)) {
		e.score, e.best, e.bestSim, e.note = s, p, r, note
	}
	return r
}

// finish builds the result.
func (e *evaluator) finish(name string, start time.Time) (*Result, error) {
	if e.best == nil {
		return nil, fmt.Errorf("planner %s: no plan of %s fits on %s (global batch %d)", name, e.m.Name, e.c.Name, e.o.GlobalBatch)
	}
	e.best.Name = name
	return &Result{Planner: name, Plan: e.best, Sim: e.bestSim, Bound: Bound(e.m, e.c, e.o), Search: time.Since(start), Evaluated: e.n}, nil
}

// Bound is the throughput bound over the GPUs the options allow: all of
// the cluster's, or under a GPU cap the fastest that many.
func Bound(m *train.Model, c *train.Cluster, o Options) train.Bound {
	use := map[string]int{}
	for _, t := range c.Types() {
		use[t] = c.GPUs(t)
	}
	if o.MaxGPUs > 0 && o.MaxGPUs < c.GPUs("") {
		types := c.Types()
		rate := func(t string) float64 {
			g, _ := c.GPUType(t)
			return g.TensorTFLOPS * g.Eff.GEMM
		}
		sort.SliceStable(types, func(i, j int) bool { return rate(types[i]) > rate(types[j]) })
		left := o.MaxGPUs
		for _, t := range types {
			use[t] = min(use[t], left)
			left -= use[t]
		}
	}
	return train.ThroughputBound(m, c, use, precisionFor(c))
}

type costKey struct {
	gpu       string
	tp, micro int
	cp        int
	recompute string
	precision string
	flash     bool
}

// cost is the parts' cost of a tp group of type gpu under p's settings.
func (e *evaluator) cost(gpu string, tp int, p *train.Plan) train.PartCost {
	k := costKey{gpu, tp, p.MicroBatch, p.ContextParallel(), p.Recompute, p.Precision, p.FlashAttention}
	if c, ok := e.costs[k]; ok {
		return c
	}
	g, _ := e.c.GPUType(gpu)
	c := train.PartCosts(e.m, &g, tp, p, e.c.IntraGBs(gpu))
	e.costs[k] = c
	return c
}

// tpOptions are the TP degrees a type can take: powers of two up to its
// server (TP stays inside a server), dividing the heads.
func tpOptions(m *train.Model, c *train.Cluster, gpu string) []int {
	var out []int
	for tp := 1; tp <= c.GPUsPerNode(gpu) && tp <= 64; tp *= 2 {
		if m.Heads%tp != 0 {
			continue
		}
		kv := m.KVHeads
		if kv > 0 && kv%tp != 0 && tp%kv != 0 {
			continue
		}
		out = append(out, tp)
	}
	return out
}

// stageTime is stage s's cost per micro-batch with n layers on a group
// whose parts cost pc, in a pipeline of P stages.
func stageTime(pc train.PartCost, n, s, P int) float64 {
	t := float64(n) * pc.Layer
	if s == 0 {
		t += pc.Embedding
	}
	if s == P-1 {
		t += pc.Head
	}
	return t
}

// replicaTime estimates one replica's time for mbs micro-batches under
// 1F1B: the first micro-batch through every stage, the rest paced by the
// slowest stage.
func replicaTime(ts []float64, mbs int) float64 {
	sum, mx := 0.0, 0.0
	for _, t := range ts {
		sum += t
		mx = math.Max(mx, t)
	}
	return sum + float64(mbs-1)*mx
}

// ranges turns layer counts into ranges.
func ranges(counts []int) []train.LayerRange {
	out := make([]train.LayerRange, len(counts))
	first := 0
	for i, n := range counts {
		out[i] = train.LayerRange{First: first, Last: first + n - 1}
		first += n
	}
	return out
}

// balance splits L layers over the stages to minimise the slowest
// stage's time, where cost(s, n) is stage s's time with n layers
// (increasing in n) and caps[s] the most layers stage s can hold (0: no
// stage fits). It returns nil when no split fits.
func balance(L int, caps []int, cost func(s, n int) float64) []int {
	P := len(caps)
	sum := 0
	for _, c := range caps {
		if c < 1 {
			return nil
		}
		sum += min(c, L)
	}
	if sum < L || P > L {
		return nil
	}
	counts := make([]int, P)
	fill := func(T float64) int {
		tot := 0
		for s := 0; s < P; s++ {
			// the most layers (at least one) whose cost stays within T:
			// cost grows with n, so a binary search finds it
			lo, hi := 1, min(caps[s], L)
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if cost(s, mid) <= T {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			counts[s] = lo
			tot += lo
		}
		return tot
	}
	lo, hi := 0.0, 0.0
	for s := 0; s < P; s++ {
		hi = math.Max(hi, cost(s, min(caps[s], L)))
	}
	for it := 0; it < 50; it++ {
		mid := (lo + hi) / 2
		if fill(mid) >= L {
			hi = mid
		} else {
			lo = mid
		}
	}
	tot := fill(hi)
	// remove the surplus from the stages that would be slowest
	for tot > L {
		bs, bt := -1, math.Inf(-1)
		for s := 0; s < P; s++ {
			if counts[s] > 1 {
				if t := cost(s, counts[s]); t > bt {
					bs, bt = s, t
				}
			}
		}
		counts[bs]--
		tot--
	}
	return counts
}

// layerCap is the most layers stage s of p (with its other stages as
// they are) can hold on a tp group of gpu; 0 when none.
func layerCap(m *train.Model, c *train.Cluster, p *train.Plan, s int, gpu string, tp int) int {
	g, _ := c.GPUType(gpu)
	q := *p
	q.Stages = append([]train.LayerRange(nil), p.Stages...)
	fits := func(n int) bool {
		q.Stages[s] = train.LayerRange{First: 0, Last: n - 1}
		return train.StageMemory(m, &q, s, &g, tp).Total <= g.MemoryBytes()
	}
	lo, hi := 0, m.Layers
	if fits(hi) {
		return hi
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// File is the result as a plan file (train.PlanFile), with the cost and
// time figures the options ask for.
func File(m *train.Model, c *train.Cluster, o Options, r *Result) *train.PlanFile {
	obj := o.Objective
	if obj == "" {
		obj = "throughput"
	}
	f := &train.PlanFile{Planner: r.Planner, Model: m.Name, Cluster: c.Name, Objective: obj, TokensPerS: r.Sim.TokensPerS,
		IterationS: r.Sim.IterationS, BoundTokensPerS: r.Bound.TokensPerS, SearchSeconds: r.Search.Seconds(), Evaluated: r.Evaluated,
		Fits: r.Sim.Fits, PeakMemoryBytes: r.Sim.PeakMemoryBytes, HeadroomBytes: Headroom(r.Sim), GPUs: r.Plan.GPUs(), Plan: r.Plan,
		SamplesPerS: r.Sim.SamplesPerS}
	if r.Bound.TokensPerS > 0 {
		f.Fraction = r.Sim.TokensPerS / r.Bound.TokensPerS
	}
	if len(o.Prices) > 0 {
		f.DollarsPerH = dollarsPerHour(r.Plan, o.Prices)
		f.DollarsPerMTokens = f.DollarsPerH / 3600 / r.Sim.TokensPerS * 1e6
	}
	if o.TokenBudget > 0 {
		f.HoursToBudget = o.TokenBudget / r.Sim.TokensPerS / 3600
	}
	if r.Explain != nil {
		f.Explain = r.Explain
	}
	return f
}
