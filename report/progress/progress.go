// Package progress draws progress bars on stderr while the command line
// waits: a bar with a count, and a search's bar (time or evaluations
// against the budget, the best rate scale so far and the bound). Off a
// terminal a bar writes a plain line now and then instead; every function
// accepts a nil bar.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
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

// New returns a progress bar on stderr. On a terminal it redraws in
// place; elsewhere (a log file, a pipe, CI) it writes a plain line at
// most every LogEvery, starting LogEvery after it was made, so short work
// stays silent and long work shows it is alive.
func New(total int, desc string) *progressbar.ProgressBar {
	if !IsTerminal(os.Stderr) {
		return newLogged(os.Stderr, total, desc, LogEvery)
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

// LogEvery is how often a bar off a terminal writes its line.
var LogEvery = 30 * time.Second

// newLogged is a bar that writes its state as plain lines to w.
func newLogged(w io.Writer, total int, desc string, every time.Duration) *progressbar.ProgressBar {
	lw := &lineWriter{w: w, every: every, last: time.Now()}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(lw),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(20),
		progressbar.OptionThrottle(time.Second),
	)
}

// lineWriter turns a bar's redraws (carriage returns, padding) into one
// plain line at most every every.
type lineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	every time.Duration
	last  time.Time
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.last) < l.every {
		return len(b), nil
	}
	line := ""
	for _, seg := range strings.Split(string(b), "\r") {
		if t := strings.TrimSpace(seg); t != "" {
			line = t
		}
	}
	if line == "" {
		return len(b), nil
	}
	l.last = time.Now()
	if _, err := fmt.Fprintln(l.w, line); err != nil {
		return 0, err
	}
	return len(b), nil
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

// NewSearch shows a search's progress on stderr (see New).
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
