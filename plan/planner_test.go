package plan

import (
	"context"
	"sync"
	"testing"
)

type fixedScore float64

func (s fixedScore) Evaluate(context.Context, *Plan) (Score, error) {
	return Score{Scale: float64(s)}, nil
}

// TestCounting: every evaluation, from several goroutines at once, is
// passed on and counted.
func TestCounting(t *testing.T) {
	c := &Counting{E: fixedScore(2)}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 25 {
				if s, err := c.Evaluate(context.Background(), &Plan{}); err != nil || s.Scale != 2 {
					t.Errorf("Evaluate = %+v, %v", s, err)
				}
			}
		})
	}
	wg.Wait()
	if n := c.Count(); n != 100 {
		t.Errorf("Count = %d, want 100", n)
	}
}
