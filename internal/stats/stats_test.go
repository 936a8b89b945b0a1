package stats

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{-1, -1, 5}, -1},
	} {
		in := append([]float64(nil), tc.in...)
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.in[i] {
				t.Errorf("Median reordered its argument: %v", tc.in)
			}
		}
	}
	if got := Median([]time.Duration{3, 1, 4, 2}); got != 2 {
		t.Errorf("Median of durations 3,1,4,2 = %v, want 2 (2.5 rounded toward zero)", got)
	}
	if got := Median([]time.Duration{time.Second, 3 * time.Second}); got != 2*time.Second {
		t.Errorf("Median(1s, 3s) = %v", got)
	}
}

func TestMean(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{2}, 2},
		{[]float64{1, 2, 3, 6}, 3},
	} {
		if got := Mean(tc.in); got != tc.want {
			t.Errorf("Mean(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := Mean([]time.Duration{1, 2}); got != 1.5 {
		t.Errorf("Mean of durations 1, 2 = %v, want 1.5", got)
	}
}

func TestSumBy(t *testing.T) {
	type item struct{ n int }
	if got := SumBy([]item{{1}, {2}, {4}}, func(i item) int { return i.n }); got != 7 {
		t.Errorf("SumBy = %d, want 7", got)
	}
	if got := SumBy(nil, func(s string) float64 { return 1 }); got != 0 {
		t.Errorf("SumBy(nil) = %g, want 0", got)
	}
}

func TestPercentile(t *testing.T) {
	sorted := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0, 1}, {0.05, 1}, {0.1, 1}, {0.11, 2}, {0.5, 5}, {0.99, 10}, {1, 10},
	} {
		if got := Percentile(sorted, tc.q); got != tc.want {
			t.Errorf("Percentile(1..10, %v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := Percentile([]float64{7}, 0.5); got != 7 {
		t.Errorf("Percentile of one value = %v", got)
	}
}
