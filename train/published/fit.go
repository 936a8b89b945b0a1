package published

import (
	"fmt"
	"math"
	"sort"

	"github.com/inlay-dev/inlay/train"
)

// Predict simulates c with eff as its GPU type's efficiency: the predicted
// iteration time and peak memory per GPU.
func Predict(c *Case, eff train.Efficiency) (seconds, memBytes float64, err error) {
	cl := *c.Cluster
	cl.Groups = append([]train.NodeGroup(nil), c.Cluster.Groups...)
	for i := range cl.Groups {
		if cl.Groups[i].GPU.Name == c.GPU {
			cl.Groups[i].GPU = cl.Groups[i].GPU.WithEfficiency(eff)
		}
	}
	r, err := train.Simulate(&c.Model, &cl, c.Plan, train.Options{})
	if err != nil {
		return 0, 0, fmt.Errorf("%s %s: %w", c.Set, c.Label, err)
	}
	return r.IterationS, r.PeakMemoryBytes, nil
}

// timeParam is one fitted time parameter: its place in Efficiency and its
// bounds.
type timeParam struct {
	name   string
	get    func(*train.Efficiency) *float64
	lo, hi float64
}

var timeParams = []timeParam{
	{"gemm", func(e *train.Efficiency) *float64 { return &e.GEMM }, 0.2, 1},
	{"gemm_traffic", func(e *train.Efficiency) *float64 { return &e.GEMMTraffic }, 0.01, 20},
	{"memory", func(e *train.Efficiency) *float64 { return &e.Memory }, 0.1, 2},
	{"backward", func(e *train.Efficiency) *float64 { return &e.Backward }, 1, 5},
	{"launch_us", func(e *train.Efficiency) *float64 { return &e.LaunchUs }, 0.5, 100},
	{"link", func(e *train.Efficiency) *float64 { return &e.Link }, 0.05, 4},
	{"network", func(e *train.Efficiency) *float64 { return &e.Network }, 0.05, 1},
	{"link_latency_us", func(e *train.Efficiency) *float64 { return &e.LinkLatencyUs }, 0.2, 200},
}

// FitOptions bound a fit.
type FitOptions struct {
	// MaxEvals bounds the objective's evaluations per fit (0: 900).
	MaxEvals int
}

// Fit returns the efficiency of GPU type gpu fitted to the cases and
// profiled layers of that type: the time parameters minimise the mean,
// over data sets, of each set's mean absolute log error (Nelder–Mead in
// log space, within bounds, from start), and the memory parameters
// (context and fragmentation) are the weighted least-squares fit of the
// measured peaks, where any case has one. Profiled layers count only for
// types without iteration measurements: a profiler's layer times (Sailor's
// backward is about three forwards) are a weaker witness than whole
// iterations. A parameter that nothing can tell (the network on one-node
// data) keeps start's value.
func Fit(cases []Case, layers []LayerCase, gpu string, start train.Efficiency, opt FitOptions) (train.Efficiency, error) {
	var mine []*Case
	var setOf []int
	sets := map[string]int{}
	multiNode, multiGPU := false, false
	precisions := map[string]bool{}
	for i := range cases {
		if cases[i].GPU == gpu {
			c := &cases[i]
			mine = append(mine, c)
			if _, ok := sets[c.Set]; !ok {
				sets[c.Set] = len(sets)
			}
			setOf = append(setOf, sets[c.Set])
			if c.Cluster.GPUs("") > c.Cluster.Groups[0].GPUsPerNode {
				multiNode = true
			}
			if c.Plan.GPUs() > 1 {
				multiGPU = true
			}
			precisions[c.Plan.Precision] = true
		}
	}
	var lays []*LayerCase
	for i := range layers {
		l := &layers[i]
		if l.GPU == gpu && len(precisions) == 0 {
			lays = append(lays, l)
			if l.TP > 1 {
				multiGPU = true
			}
		}
	}
	if len(mine) == 0 && len(lays) == 0 {
		return start, fmt.Errorf("published: no cases for %s", gpu)
	}
	var params []timeParam
	for _, p := range timeParams {
		if (p.name == "network" && !multiNode) || ((p.name == "link" || p.name == "link_latency_us") && !multiGPU) {
			continue
		}
		params = append(params, p)
	}
	max := opt.MaxEvals
	if max <= 0 {
		max = 900
	}
	eff := start
	set := func(x []float64) train.Efficiency {
		e := eff
		for i, p := range params {
			*p.get(&e) = math.Min(p.hi, math.Max(p.lo, math.Exp(x[i])))
		}
		return e
	}
	var firstErr error
	nsets := len(sets)
	if len(lays) > 0 {
		nsets++
	}
	sum := make([]float64, nsets)
	count := make([]float64, nsets)
	objective := func(x []float64) float64 {
		e := set(x)
		for i := range sum {
			sum[i], count[i] = 0, 0
		}
		for i, c := range mine {
			s, _, err := Predict(c, e)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return math.Inf(1)
			}
			sum[setOf[i]] += math.Abs(math.Log(s / c.MeasuredS))
			count[setOf[i]]++
		}
		for _, l := range lays {
			f, b := PredictLayer(l, e)
			sum[nsets-1] += math.Abs(math.Log(f/l.FwdS)) + math.Abs(math.Log(b/l.BwdS))
			count[nsets-1] += 2
		}
		total := 0.0
		for i := range sum {
			total += sum[i] / count[i]
		}
		// keep the parameters inside their bounds
		pen := 0.0
		for i, p := range params {
			if v := math.Exp(x[i]); v < p.lo || v > p.hi {
				pen += math.Abs(math.Log(v / math.Min(p.hi, math.Max(p.lo, v))))
			}
		}
		return total/float64(nsets) + pen
	}
	x0 := make([]float64, len(params))
	for i, p := range params {
		x0[i] = math.Log(*p.get(&eff))
	}
	// Restarts from the best point so far get Nelder–Mead out of the
	// kinks that the host-or-GPU maximum puts in the objective.
	x := x0
	for _, step := range []float64{0.5, 0.25, 0.12} {
		x = nelderMead(objective, x, step, max/3)
	}
	if firstErr != nil {
		return start, firstErr
	}
	eff = set(x)
	eff = fitMemory(mine, eff)
	return eff, nil
}

// fitMemory fits ContextGB and Fragmentation to the cases with a measured
// peak: measured ≈ tensors·(1 + fragmentation) + context, weighted by
// 1/measured so that the error fitted is relative.
func fitMemory(cases []*Case, eff train.Efficiency) train.Efficiency {
	var sxx, sxy, sx, sy, sw float64
	probe := eff
	probe.Fragmentation, probe.ContextGB = 0, 0
	n := 0
	for _, c := range cases {
		if c.MeasuredMemBytes <= 0 {
			continue
		}
		_, tensors, err := Predict(c, probe)
		if err != nil {
			continue
		}
		w := 1 / (c.MeasuredMemBytes * c.MeasuredMemBytes)
		y := c.MeasuredMemBytes - tensors // = frag·tensors + ctx
		sxx += w * tensors * tensors
		sxy += w * tensors * y
		sx += w * tensors
		sy += w * y
		sw += w
		n++
	}
	if n < 3 {
		return eff
	}
	det := sxx*sw - sx*sx
	if det == 0 {
		return eff
	}
	frag := (sxy*sw - sx*sy) / det
	ctx := (sxx*sy - sx*sxy) / det
	if frag < 0 { // no evidence of fragmentation: the context alone
		frag = 0
		ctx = sy / sw
	}
	eff.Fragmentation = frag
	eff.ContextGB = math.Max(0, ctx/1e9)
	return eff
}

// nelderMead minimises f from x0 (initial simplex steps of step) within
// maxEvals evaluations. Deterministic.
func nelderMead(f func([]float64) float64, x0 []float64, step float64, maxEvals int) []float64 {
	n := len(x0)
	pts := make([][]float64, n+1)
	vals := make([]float64, n+1)
	for i := range pts {
		pts[i] = append([]float64(nil), x0...)
		if i > 0 {
			pts[i][i-1] += step
		}
		vals[i] = f(pts[i])
	}
	evals := n + 1
	idx := make([]int, n+1)
	cent := make([]float64, n)
	try := func(coef float64, worst []float64) ([]float64, float64) {
		p := make([]float64, n)
		for j := range p {
			p[j] = cent[j] + coef*(worst[j]-cent[j])
		}
		evals++
		return p, f(p)
	}
	for evals < maxEvals {
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] < vals[idx[b]] })
		best, worst, second := idx[0], idx[n], idx[n-1]
		if math.Abs(vals[worst]-vals[best]) < 1e-7 {
			break
		}
		for j := range cent {
			cent[j] = 0
			for _, i := range idx[:n] {
				cent[j] += pts[i][j] / float64(n)
			}
		}
		r, fr := try(-1, pts[worst])
		switch {
		case fr < vals[best]:
			e, fe := try(-2, pts[worst])
			if fe < fr {
				pts[worst], vals[worst] = e, fe
			} else {
				pts[worst], vals[worst] = r, fr
			}
		case fr < vals[second]:
			pts[worst], vals[worst] = r, fr
		default:
			c, fc := try(0.5, pts[worst])
			if fc < vals[worst] {
				pts[worst], vals[worst] = c, fc
			} else {
				for _, i := range idx[1:] {
					for j := range pts[i] {
						pts[i][j] = pts[best][j] + 0.5*(pts[i][j]-pts[best][j])
					}
					vals[i] = f(pts[i])
					evals++
				}
			}
		}
	}
	bi := 0
	for i := range vals {
		if vals[i] < vals[bi] {
			bi = i
		}
	}
	return pts[bi]
}
