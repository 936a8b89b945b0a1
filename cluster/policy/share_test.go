package policy

import (
	"math"
	"testing"
)

func TestEqualShare(t *testing.T) {
	c := &Cluster{GPUs: []string{"a", "b"}, Count: []int{2, 2}}
	for _, tc := range []struct {
		name  string
		gpus  []int
		wants []float64 // X per job (summed over types)
	}{
		{"underloaded", []int{1, 1}, []float64{1, 1}},
		{"equal", []int{1, 1, 1, 1, 1, 1, 1, 1}, []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}},
		// Equal GPU-time: X = t/4 for the 4-GPU job and t for the others,
		// 4·t/4 + 4·t = 4 GPUs gives t = 0.8.
		{"scale", []int{4, 1, 1, 1, 1}, []float64{0.2, 0.8, 0.8, 0.8, 0.8}},
	} {
		s := &State{C: c}
		for i, g := range tc.gpus {
			s.Jobs = append(s.Jobs, Job{ID: i, GPUs: g, Weight: 1})
		}
		x := EqualShare(s)
		used := []float64{0, 0}
		for m, row := range x {
			sum := row[0] + row[1]
			if math.Abs(sum-tc.wants[m]) > 1e-9 {
				t.Errorf("%s: job %d gets %g, want %g", tc.name, m, sum, tc.wants[m])
			}
			used[0] += row[0] * float64(tc.gpus[m])
			used[1] += row[1] * float64(tc.gpus[m])
		}
		if used[0] > 2+1e-9 || used[1] > 2+1e-9 {
			t.Errorf("%s: uses %v of 2 and 2", tc.name, used)
		}
	}
}
