package main

import (
	"fmt"
	"os"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/plan"
	"github.com/schollz/progressbar/v3"
)

// newBar returns a progress bar on stderr when it is a terminal, and nil
// otherwise (every method of this file accepts a nil bar).
func newBar(total int, desc string) *progressbar.ProgressBar {
	if !isTerminal(os.Stderr) {
		return nil
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// searchBar shows a search's progress: elapsed time against the budget
// (or evaluations against the evaluation budget), evaluations, the best
// rate scale so far and the upper bound. Planners may call it from several
// goroutines.
type searchBar struct {
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	start  time.Time
	budget time.Duration
	evals  int
	bound  float64
	label  string
}

// newSearchBar returns nil when stderr is not a terminal.
func newSearchBar(label string, budget time.Duration, evals int, bound float64) *searchBar {
	total := 1000
	if budget <= 0 && evals > 0 {
		total = evals
	}
	bar := newBar(total, label)
	if bar == nil {
		return nil
	}
	return &searchBar{bar: bar, start: time.Now(), budget: budget, evals: evals, bound: bound, label: label}
}

func (s *searchBar) update(pg plan.Progress) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	desc := fmt.Sprintf("%s: %d evals, best %.3g× (bound %.3g×)", s.label, pg.Evals, pg.Best.Scale, s.bound)
	if pg.Note != "" {
		desc += " " + pg.Note
	}
	s.bar.Describe(desc)
	switch {
	case s.budget > 0:
		frac := float64(time.Since(s.start)) / float64(s.budget)
		if frac > 1 {
			frac = 1
		}
		_ = s.bar.Set(int(frac * 1000))
	case s.evals > 0:
		_ = s.bar.Set(pg.Evals)
	}
}

func (s *searchBar) done() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.bar.Finish()
	_ = s.bar.Clear()
}

// barAdd advances a possibly nil bar.
func barAdd(b *progressbar.ProgressBar, n int) {
	if b != nil {
		_ = b.Add(n)
	}
}

// barDescribe sets a possibly nil bar's description.
func barDescribe(b *progressbar.ProgressBar, s string) {
	if b != nil {
		b.Describe(s)
	}
}

// barDone clears a possibly nil bar.
func barDone(b *progressbar.ProgressBar) {
	if b != nil {
		_ = b.Finish()
		_ = b.Clear()
	}
}

// defaultWorkers is the number of evaluations run at once by default: one
// per core.
func defaultWorkers() int { return goruntime.NumCPU() }
