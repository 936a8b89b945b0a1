package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/inlay-dev/inlay/train"
)

// Allocation is what a cluster scheduler gives a job: GPUs by type, and
// how many of each type sit in one server (8 when absent).
type Allocation struct {
	GPUs    map[string]int
	PerNode map[string]int
}

// key is the allocation's canonical form: types sorted, zero counts left
// out.
func (a Allocation) key() string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(a.GPUs)) {
		if a.GPUs[t] > 0 {
			parts = append(parts, fmt.Sprintf("%dx%s/%d", a.GPUs[t], t, a.perNode(t)))
		}
	}
	return strings.Join(parts, ",")
}

func (a Allocation) perNode(t string) int {
	if n := a.PerNode[t]; n > 0 {
		return n
	}
	return 8
}

// JobThroughput gives one training job's throughput on any allocation
// from the inlay planner, cached by allocation: the one figure the
// cluster policies need for a job given as a model. Safe for concurrent
// use.
type JobThroughput struct {
	Model train.Model
	// NetworkGBs is each server's network bandwidth (GB/s); Options the
	// planner's (objective, batch, budget).
	NetworkGBs float64
	Options    Options

	mu    sync.Mutex
	cache map[string]float64
	// Plans counts the planner runs (cache misses).
	Plans int
}

// TokensPerS is the job's tokens a second on the allocation (0 when no
// plan fits it); a graph network's tokens are its samples.
func (j *JobThroughput) TokensPerS(a Allocation) (float64, error) {
	key := a.key()
	if key == "" {
		return 0, nil
	}
	j.mu.Lock()
	if v, ok := j.cache[key]; ok {
		j.mu.Unlock()
		return v, nil
	}
	j.mu.Unlock()
	var list []train.GPUCount
	types := slices.Sorted(maps.Keys(a.GPUs))
	for _, t := range types {
		if a.GPUs[t] <= 0 {
			continue
		}
		g, ok := train.LookupGPU(t)
		if !ok {
			return 0, fmt.Errorf("planner: allocation: unknown GPU type %q", t)
		}
		list = append(list, train.GPUCount{Count: a.GPUs[t], GPU: g})
	}
	net := j.NetworkGBs
	if net <= 0 {
		net = 100
	}
	c, err := mixedPerType(list, a, net)
	if err != nil {
		return 0, err
	}
	v := 0.0
	if res, err := (Inlay{}).Plan(&j.Model, c, j.Options); err == nil {
		v = res.Sim.TokensPerS
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cache == nil {
		j.cache = map[string]float64{}
	}
	j.cache[key] = v
	j.Plans++
	return v, nil
}

// SamplesPerS is the job's samples a second on the allocation: a graph
// network's (a CNN's images, say) as the planner predicts them, or a
// transformer's sequences (tokens over the sequence length); 0 when no
// plan fits.
func (j *JobThroughput) SamplesPerS(a Allocation) (float64, error) {
	v, err := j.TokensPerS(a)
	if err != nil || j.Model.Net != nil {
		return v, err
	}
	return v / float64(max(j.Model.Seq, 1)), nil
}

// mixedPerType builds the cluster with each type's own server size.
func mixedPerType(list []train.GPUCount, a Allocation, net float64) (*train.Cluster, error) {
	var c *train.Cluster
	for _, e := range list {
		one, err := train.MixedCluster([]train.GPUCount{e}, a.perNode(e.GPU.Name), 0, net)
		if err != nil {
			return nil, err
		}
		if c == nil {
			c = one
			continue
		}
		c.Groups = append(c.Groups, one.Groups...)
		c.Name += "," + one.Name
	}
	return c, nil
}
