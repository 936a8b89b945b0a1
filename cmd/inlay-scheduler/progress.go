package main

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/cluster/throughput"
)

// loadThroughputs returns Gavel's table, or the file's.
func loadThroughputs(path string) (*throughput.Table, error) {
	if path == "" || path == "gavel" {
		return throughput.Gavel()
	}
	return throughput.LoadGavel(path)
}

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

func sortedKeys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
