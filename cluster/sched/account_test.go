package sched

import (
	"math"
	"testing"
)

func TestAccount(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Stretch
		want Progress
	}{
		{"a whole round", Stretch{Start: 100, Length: 360, Rate: 2, Remaining: 1000, Total: 1000},
			Progress{Steps: 720, End: 460}},
		{"finishes within the round", Stretch{Start: 0, Length: 360, Rate: 2, Remaining: 100, Total: 1000},
			Progress{Steps: 100, End: 50, Finished: true}},
		{"the last sliver is taken whole", Stretch{Start: 0, Length: 360, Rate: 2, Remaining: 720 + 1e-10, Total: 1000},
			Progress{Steps: 720 + 1e-10, End: 360 + 0.5e-10, Finished: true}},
		{"a restore costs its seconds", Stretch{Start: 0, Length: 360, Preempt: 60, Rate: 2, Remaining: 1000, Total: 1000},
			Progress{Steps: 600, End: 360}},
		{"a restore longer than the round makes nothing and overruns", Stretch{Start: 0, Length: 30, Preempt: 60, Rate: 2, Remaining: 1000, Total: 1000},
			Progress{Steps: 0, End: 60}},
		{"capped at the next event", Stretch{Start: 0, Length: 30, Preempt: 60, Rate: 2, Remaining: 1000, Total: 1000, Capped: true},
			Progress{Steps: 0, End: 30}},
		{"a reserve never finishes the job", Stretch{Start: 0, Length: 360, Rate: 2, Remaining: 100, Total: 1000, Reserve: 1e-6},
			Progress{Steps: 100 - 1e-3, End: (100 - 1e-3) / 2}},
		{"a reserve above what remains makes nothing", Stretch{Start: 0, Length: 360, Rate: 2, Remaining: 1e-4, Total: 1000, Reserve: 1e-6},
			Progress{Steps: 0, End: 0}},
		{"no rate, no steps", Stretch{Start: 5, Length: 360, Rate: 0, Remaining: 10, Total: 10},
			Progress{Steps: 0, End: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Account(tc.in)
			if math.Abs(got.Steps-tc.want.Steps) > 1e-9 || math.Abs(got.End-tc.want.End) > 1e-9 || got.Finished != tc.want.Finished {
				t.Errorf("Account(%+v) = %+v, want %+v", tc.in, got, tc.want)
			}
			if ran := got.Ran(tc.in); math.Abs(ran-(got.End-tc.in.Start)) > 0 {
				t.Errorf("ran %g", ran)
			}
		})
	}
}

func TestTimeToFinish(t *testing.T) {
	for _, tc := range []struct {
		rem, rate, pre, want float64
	}{
		{100, 2, 0, 50},
		{100, 2, 30, 80},
		{0, 2, 30, 30},
		{100, 0, 0, math.Inf(1)},
	} {
		if got := TimeToFinish(tc.rem, tc.rate, tc.pre); got != tc.want {
			t.Errorf("TimeToFinish(%g, %g, %g) = %g, want %g", tc.rem, tc.rate, tc.pre, got, tc.want)
		}
	}
	if !Finished(1e-10, 1000) || Finished(1e-5, 1000) {
		t.Error("Finished's tolerance is 1e-9 of the total")
	}
}

func TestActiveTime(t *testing.T) {
	var a ActiveTime
	a.Start(10)
	if got := a.At(20, 3); got != 30 {
		t.Errorf("3 jobs for 10 s: %g", got)
	}
	a.Advance(20, 3)
	a.Advance(25, 0)
	a.Advance(30, 2)
	if got := a.At(40, 4); got != 30+10+40 {
		t.Errorf("integral %g, want 80", got)
	}
	// The mean over a job's life is the integral's difference over it.
	from := a.At(30, 4)
	if mean := (a.At(40, 4) - from) / 10; mean != 4 {
		t.Errorf("mean %g", mean)
	}
}

func TestIsolatedTime(t *testing.T) {
	for _, tc := range []struct {
		name   string
		steps  float64
		gpus   int
		n      float64
		counts []int
		alone  []float64
		want   float64
	}{
		{"alone on one type", 3600, 1, 1, []int{4}, []float64{1}, 3600},
		{"a mean below one counts as one", 3600, 1, 0.2, []int{4}, []float64{1}, 3600},
		{"eight jobs share four GPUs: half the time", 3600, 1, 8, []int{4}, []float64{1}, 7200},
		{"count-weighted mean rate", 3000, 1, 1, []int{1, 3}, []float64{4, 0}, 3000},
		{"a job larger than its share", 100, 4, 2, []int{4}, []float64{1}, 200},
		{"no GPUs", 100, 1, 1, []int{0}, []float64{1}, 0},
		{"no rate", 100, 1, 1, []int{2}, []float64{0}, 0},
	} {
		if got := IsolatedTime(tc.steps, tc.gpus, tc.n, tc.counts, tc.alone); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %g, want %g", tc.name, got, tc.want)
		}
	}
}
