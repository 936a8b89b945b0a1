package hw

import "github.com/inlay-dev/inlay/graph"

// MemoryLimit is one bound on the weights a plan keeps resident: a
// processor's memory_mib or a memory domain's capacity_mib.
type MemoryLimit struct {
	// What names it: `processor "npu" (memory_mib)` or
	// `domain "dram" (capacity_mib)`.
	What string
	// Procs are the processors whose layers' weights count against it.
	Procs []ProcID
	// Bytes is the capacity (> 0).
	Bytes int64
}

// MemoryLimits lists the platform's memory capacities, processors first,
// then domains, in file order; none when the platform gives none.
func (p *Platform) MemoryLimits() []MemoryLimit {
	var out []MemoryLimit
	for i, pr := range p.Processors {
		if pr.MemoryBytes > 0 {
			out = append(out, MemoryLimit{What: "processor " + quote(pr.Name) + " (memory_mib)", Procs: []ProcID{i}, Bytes: pr.MemoryBytes})
		}
	}
	for _, d := range p.Domains {
		if d.CapacityBytes <= 0 {
			continue
		}
		l := MemoryLimit{What: "domain " + quote(d.Name) + " (capacity_mib)", Bytes: d.CapacityBytes}
		for i, pr := range p.Processors {
			if pr.Domain == d.Name {
				l.Procs = append(l.Procs, i)
			}
		}
		out = append(out, l)
	}
	return out
}

func quote(s string) string { return `"` + s + `"` }

// WeightBytes is the memory a layer's weights take when it runs in data
// type d: float weights are held in d (as the cost model reads them, so a
// float32 layer in int8 keeps a quarter), others as they are.
func WeightBytes(w graph.Work, d graph.DType) int64 {
	if w.DType.IsFloat() && w.DType.Size() > 0 && d.Size() > 0 {
		return w.WeightBytes * int64(d.Size()) / int64(w.DType.Size())
	}
	return w.WeightBytes
}
