package sim

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/workload"
)

// chainModel builds a model whose layers form a random DAG: layer i reads
// the graph input or one or two earlier layers. Every node is a Conv with
// MACs, so each is a layer of its own and layer IDs equal node IDs.
func dagModel(name string, n int, rng *rand.Rand) *graph.Model {
	m := &graph.Model{Name: name, Tensors: map[string]*graph.Tensor{}}
	m.Tensors["in"] = &graph.Tensor{Name: "in", DType: graph.Float32, Shape: graph.Shape{1, 256}, Kind: graph.Input}
	m.Tensors["w"] = &graph.Tensor{Name: "w", DType: graph.Float32, Shape: graph.Shape{16}, Kind: graph.Initializer}
	for i := 0; i < n; i++ {
		out := fmt.Sprintf("t%d", i)
		m.Tensors[out] = &graph.Tensor{Name: out, DType: graph.Float32, Shape: graph.Shape{1, int64(64 * (1 + rng.Intn(8)))}, Kind: graph.Activation}
		ins := []string{"in"}
		if i > 0 {
			ins = []string{fmt.Sprintf("t%d", i-1-rng.Intn(min(i, 3)))}
			if i > 1 && rng.Intn(3) == 0 {
				if x := fmt.Sprintf("t%d", rng.Intn(i)); x != ins[0] {
					ins = append(ins, x)
				}
			}
		}
		ins = append(ins, "w")
		m.Nodes = append(m.Nodes, &graph.Node{Name: out, Op: "Conv", Inputs: ins, Outputs: []string{out},
			Work: graph.Work{MACs: int64(1e5 * (1 + rng.Intn(50))), FLOPs: int64(2e5 * (1 + rng.Intn(50)))}})
	}
	// Outputs: every tensor nobody reads.
	read := map[string]bool{}
	for _, nd := range m.Nodes {
		for _, in := range nd.Inputs {
			read[in] = true
		}
	}
	for i := 0; i < n; i++ {
		if o := fmt.Sprintf("t%d", i); !read[o] {
			m.Outputs = append(m.Outputs, o)
		}
	}
	m.Inputs = []string{"in"}
	if err := m.Link(); err != nil {
		panic(err)
	}
	return m
}

// testEstimator is a non-additive cost model with a valid per-layer lower
// bound: a subgraph of n layers on processor p costs overhead_p plus the
// sum of its layers' base times, discounted by fusion to 0.7+0.3/n of it.
// So every layer's share is at least 0.7 of its base time.
type testEstimator struct {
	pl          *hw.Platform
	base        map[*graph.LayerGraph][][]time.Duration // [layer][proc]
	unsupported map[*graph.LayerGraph][][]bool
	overhead    []time.Duration
}

var _ cost.Estimator = (*testEstimator)(nil)
var _ ratebound.LayerLowerBounder = (*testEstimator)(nil)

func dtypeFactor(d graph.DType) float64 {
	if d == graph.Int8 {
		return 0.5
	}
	return 1
}

func (e *testEstimator) check(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) error {
	for _, l := range set {
		if e.unsupported[lg][l][on.Proc] {
			return fmt.Errorf("layer %d on %s: %w", l, e.pl.Processors[on.Proc].Name, cost.ErrUnsupported)
		}
	}
	return nil
}

func (e *testEstimator) Subgraph(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (time.Duration, error) {
	if err := e.check(lg, set, on); err != nil {
		return 0, err
	}
	var sum float64
	for _, l := range set {
		sum += float64(e.base[lg][l][on.Proc]) * dtypeFactor(on.DType)
	}
	n := float64(len(set))
	return e.overhead[on.Proc] + time.Duration(sum*(0.7+0.3/n)), nil
}

func (e *testEstimator) LayerLowerBound(lg *graph.LayerGraph, layer int, on hw.Config) (time.Duration, error) {
	if err := e.check(lg, graph.LayerSet{layer}, on); err != nil {
		return 0, err
	}
	return time.Duration(float64(e.base[lg][layer][on.Proc]) * dtypeFactor(on.DType) * 0.7 * (1 - 1e-9)), nil
}

func (e *testEstimator) Transfer(bytes int64, from, to int) time.Duration {
	return e.pl.Transfer(bytes, from, to)
}

type randInstance struct {
	w   *workload.Workload
	pl  *hw.Platform
	est *testEstimator
}

// randomInstance builds a small random platform (1–4 processors in one or
// two memory domains), 1–3 models of 2–8 layers in 1–2 groups, and the test
// estimator over them.
func randomInstance(rng *rand.Rand) *randInstance {
	pl := &hw.Platform{Name: "rand", Domains: []hw.Domain{{Name: "d0"}, {Name: "d1"}}}
	nproc := 1 + rng.Intn(4)
	for p := 0; p < nproc; p++ {
		pr := &hw.Processor{
			Name: fmt.Sprintf("p%d", p), Kind: []string{"cpu", "gpu", "npu"}[rng.Intn(3)],
			Backends:    []string{"ort-cpu"},
			DTypes:      []hw.DTypeSpec{{DType: graph.Float32, PeakGOPS: 100}},
			Concurrency: 1 + rng.Intn(2), Domain: []string{"d0", "d1"}[rng.Intn(2)],
		}
		if rng.Intn(2) == 0 {
			pr.DTypes = append(pr.DTypes, hw.DTypeSpec{DType: graph.Int8, PeakGOPS: 400})
		}
		pl.Processors = append(pl.Processors, pr)
	}
	pl.Links = []hw.Link{{From: "d0", To: "d1", BandwidthGBs: 0.5 + 4*rng.Float64(),
		Latency: time.Duration(rng.Intn(500)) * time.Microsecond, Shared: rng.Intn(2) == 0}}
	est := &testEstimator{pl: pl, base: map[*graph.LayerGraph][][]time.Duration{}, unsupported: map[*graph.LayerGraph][][]bool{}}
	for p := 0; p < nproc; p++ {
		est.overhead = append(est.overhead, time.Duration(rng.Intn(300))*time.Microsecond)
	}
	w := &workload.Workload{Platform: "rand"}
	nmodels := 1 + rng.Intn(3)
	for i := 0; i < nmodels; i++ {
		name := fmt.Sprintf("m%d", i)
		g := dagModel(name, 2+rng.Intn(7), rng)
		lg, err := graph.BuildLayers(g)
		if err != nil {
			panic(err)
		}
		base := make([][]time.Duration, len(lg.Layers))
		uns := make([][]bool, len(lg.Layers))
		for l := range lg.Layers {
			base[l] = make([]time.Duration, nproc)
			uns[l] = make([]bool, nproc)
			ok := false
			for p := 0; p < nproc; p++ {
				base[l][p] = time.Duration(100+rng.Intn(3000)) * time.Microsecond
				uns[l][p] = rng.Intn(4) == 0
				ok = ok || !uns[l][p]
			}
			if !ok {
				uns[l][rng.Intn(nproc)] = false
			}
		}
		est.base[lg], est.unsupported[lg] = base, uns
		w.Models = append(w.Models, &workload.Model{Name: name, Graph: g, Layers: lg, Source: "test"})
	}
	ngroups := 1 + rng.Intn(min(2, nmodels))
	for gi := 0; gi < ngroups; gi++ {
		period := time.Duration(5+rng.Intn(45)) * ms
		w.Groups = append(w.Groups, &workload.Group{
			Name: fmt.Sprintf("g%d", gi), Period: period,
			Deadline: time.Duration(float64(period) * (0.3 + 1.7*rng.Float64())),
			Arrival:  []string{workload.Periodic, workload.Poisson}[rng.Intn(2)],
			After:    map[string][]string{},
		})
	}
	for i, m := range w.Models {
		g := w.Groups[i%ngroups]
		if len(g.Models) > 0 && rng.Intn(2) == 0 {
			g.After[m.Name] = []string{g.Models[rng.Intn(len(g.Models))]}
		}
		g.Models = append(g.Models, m.Name)
	}
	w.AllowInt8()
	return &randInstance{w: w, pl: pl, est: est}
}

// randomPlan cuts each model's layers (in ID order, so every piece is
// convex) into runs and puts each on a random processor that runs all of
// its layers, at a random configuration; unplaceable runs are split into
// single layers.
func (in *randInstance) randomPlan(rng *rand.Rand) *plan.Plan {
	p := &plan.Plan{Planner: "random", Platform: in.pl.Name}
	for _, m := range in.w.Models {
		lg := m.Layers
		mp := plan.ModelPlan{Model: m.Name, Priority: rng.Intn(3)}
		place := func(set graph.LayerSet) bool {
			var ok []int
			for pi := range in.pl.Processors {
				if in.est.check(lg, set, hw.Config{Proc: pi}) == nil {
					ok = append(ok, pi)
				}
			}
			if len(ok) == 0 {
				return false
			}
			pi := ok[rng.Intn(len(ok))]
			cfgs := in.pl.Configs(pi)
			c := cfgs[rng.Intn(len(cfgs))]
			mp.Subgraphs = append(mp.Subgraphs, plan.Subgraph{Layers: set, Processor: in.pl.Processors[pi].Name,
				Backend: c.Backend, DType: c.DType.String()})
			return true
		}
		for start := 0; start < len(lg.Layers); {
			end := start + 1 + rng.Intn(len(lg.Layers)-start)
			if !place(graph.Range(start, end)) {
				for l := start; l < end; l++ {
					if !place(graph.LayerSet{l}) {
						panic("layer runs nowhere")
					}
				}
			}
			start = end
		}
		p.Models = append(p.Models, mp)
	}
	return p
}
