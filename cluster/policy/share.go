package policy

import (
	"math"
	"sort"
)

// EqualShare is Gavel's heterogeneity-agnostic max-min fair allocation
// (its MaxMinFairnessPolicy: every throughput taken as 1), in closed form.
// With the scale factor s and weight w of job m, it maximises
// min_m (s_m/w_m)·Σ_g x_mg subject to Σ_g x_mg ≤ 1 and Σ_m s_m·x_mg ≤ n_g.
// Only the totals X_m = Σ_g x_mg matter, and water-filling gives them:
// X_m = min(1, t·w_m/s_m) with the largest t that fits Σ_m s_m·X_m ≤ N.
// Each X_m is spread over the types in proportion to their GPU counts,
// which keeps every type within its count. O(n log n).
func EqualShare(s *State) [][]float64 {
	n := len(s.Jobs)
	total := float64(s.C.Total())
	x := make([][]float64, n)
	if n == 0 || total == 0 {
		// No GPUs (a cluster whose nodes are all gone or NotReady): every
		// job gets a row of zeros, one per type, as callers index it.
		for m := range x {
			x[m] = make([]float64, len(s.C.Count))
		}
		return x
	}
	// Breakpoints t_m = s_m/w_m where job m saturates at X = 1.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	bp := func(i int) float64 { return float64(s.Jobs[i].GPUs) / s.Jobs[i].Weight }
	sort.SliceStable(idx, func(a, b int) bool { return bp(idx[a]) < bp(idx[b]) })
	// Σ s·X(t) = Σ_{saturated} s + t·Σ_{unsaturated} w.
	sumW := 0.0
	for _, j := range s.Jobs {
		sumW += j.Weight
	}
	satS := 0.0
	t := math.Inf(1)
	for _, i := range idx {
		// Try t below job i's breakpoint: jobs before i saturated.
		cand := (total - satS) / sumW
		if cand <= bp(i) {
			t = cand
			break
		}
		satS += float64(s.Jobs[i].GPUs)
		sumW -= s.Jobs[i].Weight
	}
	for m, j := range s.Jobs {
		X := 1.0
		if !math.IsInf(t, 1) {
			X = math.Min(1, t*j.Weight/float64(j.GPUs))
		}
		x[m] = make([]float64, len(s.C.Count))
		for g, c := range s.C.Count {
			x[m][g] = X * float64(c) / total
		}
	}
	return x
}

// IsolatedThroughput is each job's throughput under EqualShare, the
// normalisation of Gavel's heterogeneity-aware policies.
func IsolatedThroughput(s *State, share [][]float64) []float64 {
	out := make([]float64, len(s.Jobs))
	for m := range s.Jobs {
		for g := range s.C.Count {
			out[m] += s.Alone(&s.Jobs[m], g) * share[m][g]
		}
	}
	return out
}

// Singles turns a matrix (job index × column) into allocation entries.
func Singles(s *State, x [][]float64, note string) *Allocation {
	a := &Allocation{Note: note, Entries: make([]Entry, 0, len(x))}
	for m, row := range x {
		a.Entries = append(a.Entries, Entry{A: s.Jobs[m].ID, B: -1, X: row})
	}
	return a
}
