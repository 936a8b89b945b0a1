package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress prints "desc: done/total" to w at most every few seconds, and
// the last count when done is total.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	desc  string
	total int
	last  time.Time
}

func newProgress(w io.Writer, desc string, total int) *progress {
	return &progress{w: w, desc: desc, total: total}
}

func (p *progress) set(done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done < p.total && time.Since(p.last) < 5*time.Second {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "%s: %d/%d\n", p.desc, done, p.total)
}
