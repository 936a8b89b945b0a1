package hw

import "fmt"

// Shared-resource kinds (Shared.Kind).
const (
	// SharedMemory is a memory channel (DRAM controller, bus) of a given
	// bandwidth that its processors' traffic adds up on.
	SharedMemory = "memory"
	// SharedCache is a last-level cache of a given size that its
	// processors' working sets compete for.
	SharedCache = "cache"
)

// SharedKinds lists the kinds a Shared resource may have.
var SharedKinds = []string{SharedCache, SharedMemory}

// Shared is a resource several processors contend for: a last-level cache
// or a memory channel. Subgraphs running at the same time on processors
// that share one slow each other down (package cost's contention model).
type Shared struct {
	Name string
	// Kind is SharedMemory or SharedCache.
	Kind string
	// Processors are the names of the processors that share it; empty
	// means every processor of the platform.
	Processors []string
	// BandwidthGBs is a memory channel's sustained bandwidth (10⁹ B/s).
	BandwidthGBs float64
	// SizeBytes is a cache's capacity.
	SizeBytes int64
	// Source says where the figures come from.
	Source string
}

// DefaultContentionSensitivity is a processor's sensitivity when its file
// gives none (Processor.ContentionSensitivity).
const DefaultContentionSensitivity = 1.0

// MaxContentionSensitivity bounds Processor.ContentionSensitivity (and
// fitted sensitivities): a subgraph that is wholly memory-bound slows down
// by at most this factor's worth per saturated resource.
const MaxContentionSensitivity = 4.0

// Sharers returns, for every processor, the indices into p.Shared of the
// resources it shares (ascending). A processor that shares nothing gets nil.
func (p *Platform) Sharers() [][]int {
	out := make([][]int, len(p.Processors))
	for ri, s := range p.Shared {
		if len(s.Processors) == 0 {
			for i := range p.Processors {
				out[i] = append(out[i], ri)
			}
			continue
		}
		for _, name := range s.Processors {
			for i, pr := range p.Processors {
				if pr.Name == name {
					out[i] = append(out[i], ri)
				}
			}
		}
	}
	return out
}

// validateShared checks the platform's shared resources.
func (p *Platform) validateShared() *fieldError {
	names := map[string]bool{}
	procs := map[string]bool{}
	for _, pr := range p.Processors {
		procs[pr.Name] = true
	}
	for i, s := range p.Shared {
		if s.Name == "" {
			return ferr("is required", "contention", i, "name")
		}
		if names[s.Name] {
			return ferr(fmt.Sprintf("duplicate shared resource %q", s.Name), "contention", i, "name")
		}
		names[s.Name] = true
		switch s.Kind {
		case SharedMemory:
			if !(s.BandwidthGBs > 0) {
				return ferr("must be > 0 for a memory channel", "contention", i, "bandwidth_gbs")
			}
			if s.SizeBytes != 0 {
				return ferr("is a cache's figure; a memory channel has bandwidth_gbs", "contention", i, "size_kib")
			}
		case SharedCache:
			if !(s.SizeBytes > 0) {
				return ferr("must be > 0 for a cache", "contention", i, "size_kib")
			}
			if s.BandwidthGBs != 0 {
				return ferr("is a memory channel's figure; a cache has size_kib", "contention", i, "bandwidth_gbs")
			}
		default:
			return ferr(fmt.Sprintf("unknown kind %q (kinds: cache, memory)", s.Kind), "contention", i, "kind")
		}
		for j, name := range s.Processors {
			if !procs[name] {
				return ferr(fmt.Sprintf("unknown processor %q", name), "contention", i, "processors", j)
			}
			for _, o := range s.Processors[:j] {
				if o == name {
					return ferr(fmt.Sprintf("duplicate processor %q", name), "contention", i, "processors", j)
				}
			}
		}
	}
	for i, pr := range p.Processors {
		if cs := pr.ContentionSensitivity; !(cs >= 0 && cs <= MaxContentionSensitivity) {
			return ferr(fmt.Sprintf("must be in [0, %g]", MaxContentionSensitivity), "processors", i, "contention_sensitivity")
		}
	}
	return nil
}
