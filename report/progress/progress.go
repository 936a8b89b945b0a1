// Package progress draws progress bars on stderr while the command line
// waits: a bar with a count, and a search's bar (time or evaluations
// against the budget, the best rate scale so far and the bound). Off a
// terminal there are none: every function accepts a nil bar.
package progress

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/inlay-dev/inlay/plan"
)

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// New returns a progress bar on stderr when it is a terminal, and nil
// otherwise (every method of this file accepts a nil bar).
func New(total int, desc string) *progressbar.ProgressBar {
	if !IsTerminal(os.Stderr) {
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

// Search shows a search's progress: elapsed time against the budget
// (or evaluations against the evaluation budget), evaluations, the best
// rate scale so far and the upper bound. Planners may call it from several
// goroutines.
type Search struct {
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	start  time.Time
	budget time.Duration
	evals  int
	bound  float64
	label  string
}

// NewSearch returns nil when stderr is not a terminal.
func NewSearch(label string, budget time.Duration, evals int, bound float64) *Search {
	total := 1000
	if budget <= 0 && evals > 0 {
		total = evals
	}
	bar := New(total, label)
	if bar == nil {
		return nil
	}
	return &Search{bar: bar, start: time.Now(), budget: budget, evals: evals, bound: bound, label: label}
}

// Update shows a search's progress.
func (s *Search) Update(pg plan.Progress) {
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

// Done clears the bar.
func (s *Search) Done() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.bar.Finish()
	_ = s.bar.Clear()
}

// Add advances a possibly nil bar.
func Add(b *progressbar.ProgressBar, n int) {
	if b != nil {
		_ = b.Add(n)
	}
}

// Describe sets a possibly nil bar's description.
func Describe(b *progressbar.ProgressBar, s string) {
	if b != nil {
		b.Describe(s)
	}
}

// Done clears a possibly nil bar.
func Done(b *progressbar.ProgressBar) {
	if b != nil {
		_ = b.Finish()
		_ = b.Clear()
	}
}

// Set returns a progress callback that sizes a possibly nil bar to total
// and sets it to done.
func Set(b *progressbar.ProgressBar) func(done, total int) {
	return func(done, total int) {
		if b != nil {
			b.ChangeMax(total)
			_ = b.Set(done)
		}
	}
}

// SetDescribed is Set that also says what was done last.
func SetDescribed(b *progressbar.ProgressBar) func(done, total int, what string) {
	return func(done, total int, what string) {
		Set(b)(done, total)
		Describe(b, what)
	}
}
