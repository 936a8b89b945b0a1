package adapt

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/sia"
)

// Models fits every model of the benchmark on cluster c's types.
func Models(b *sia.Bench, c *sia.Cluster) (map[string]*goodput.Model, error) {
	names := slices.Sorted(maps.Keys(b.Models))
	out := map[string]*goodput.Model{}
	for _, n := range names {
		if _, ok := c.MaxEpochs[n]; !ok {
			continue // profiled but not part of the simulator's applications
		}
		m, err := goodput.NewModel(b, b.Models[n], c)
		if err != nil {
			return nil, err
		}
		out[n] = m
	}
	return out, nil
}

// Jobs turns a workload file's lines into jobs. force, when not nil,
// overrides every job's kind (the rigid experiment). copies > 1 repeats
// the workload that many times (a cluster scaled by that factor gets the
// load scaled too); copies of a job arrive together.
func Jobs(file string, w []sia.Job, models map[string]*goodput.Model, c *Cluster, force *Kind, copies int) ([]Job, error) {
	var out []Job
	for _, sj := range w {
		m, ok := models[sj.Model]
		if !ok {
			known := slices.Sorted(maps.Keys(models))
			return nil, fmt.Errorf("%s:%d: unknown model %q (models: %v)", file, sj.Line, sj.Model, known)
		}
		k, err := ParseKind(sj.Category)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, sj.Line, err)
		}
		if force != nil {
			k = *force
		}
		fits := false
		for t := range c.Types {
			fits = fits || (m.Fits[t] != nil && c.GPUs(t) >= sj.GPUs)
		}
		if !fits && k == Rigid {
			return nil, fmt.Errorf("%s:%d: %s asks for %d GPUs, more than any GPU type its model runs on holds", file, sj.Line, sj.Name, sj.GPUs)
		}
		for range max(copies, 1) {
			out = append(out, Job{Name: sj.Name, Model: m, Arrival: sj.Arrival, GPUs: sj.GPUs, Batch: float64(sj.Batch), Kind: k})
		}
	}
	sort.SliceStable(out, func(i, k int) bool { return out[i].Arrival < out[k].Arrival })
	for i := range out {
		out[i].ID = i
		if copies > 1 {
			out[i].Name = fmt.Sprintf("%s#%d", out[i].Name, i)
		}
	}
	return out, nil
}
