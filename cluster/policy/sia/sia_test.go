package sia

import "testing"

// Every configuration a job can take beats leaving it without GPUs (a
// negative term in the minimised objective), a rigid job of 16 GPUs on its
// slowest type included: before rigid goodputs counted their GPUs, its term
// was 1 + 16 λ_a − λ_n > 0 and it waited for a faster type.
func TestCoefAllocatesEveryJob(t *testing.T) {
	p := New()
	for _, c := range []struct {
		rel   float64
		gpus  int
		rigid bool
	}{
		{1, 1, false}, {3, 16, false},
		{1, 1, true}, {1, 16, true}, {2.5, 16, true}, {1, 24, true},
	} {
		if got := p.coef(c.rel, c.gpus, c.rigid); !(got < 0) {
			t.Errorf("rel %g, %d GPUs, rigid %v: term %.3f, want < 0", c.rel, c.gpus, c.rigid, got)
		}
	}
	// Faster is better (a smaller term), and a rigid job's term falls with
	// its size as Sia's does.
	if !(p.coef(2, 4, true) < p.coef(1, 4, true)) || !(p.coef(1, 16, true) < p.coef(1, 4, true)) {
		t.Error("terms do not fall with goodput and with a rigid job's size")
	}
}
