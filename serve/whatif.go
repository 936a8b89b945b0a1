package serve

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// WhatIf changes a workload and a platform without touching their files:
// a group's rate or deadline, a processor's speed or whether it is there.
type WhatIf struct {
	Groups     []GroupChange `json:"groups,omitempty"`
	Processors []ProcChange  `json:"processors,omitempty"`
}

// GroupChange sets a group's nominal rate and/or deadline (0: unchanged).
// A deadline that equalled the period follows a new rate unless a deadline
// is given too (as in the workload file, where it defaults to the period).
type GroupChange struct {
	Name       string  `json:"name"`
	RateHz     float64 `json:"rate_hz,omitempty"`
	DeadlineMs float64 `json:"deadline_ms,omitempty"`
}

// ProcChange scales a processor's speed (peak throughput and memory
// bandwidth × Speed, fixed overheads ÷ Speed; 0 means 1) or takes it
// away (Off).
type ProcChange struct {
	Name  string  `json:"name"`
	Speed float64 `json:"speed,omitempty"`
	Off   bool    `json:"off,omitempty"`
}

// maxWhatIfHz bounds a what-if rate (the workload file bounds periods to a
// day; this keeps a simulation's request count sane).
const maxWhatIfHz = 10_000

func (wi *WhatIf) check() error {
	if wi == nil {
		return nil
	}
	for _, g := range wi.Groups {
		if g.RateHz < 0 || g.RateHz > maxWhatIfHz || math.IsNaN(g.RateHz) {
			return fmt.Errorf("serve: what-if: group %q: rate_hz %v: want a rate in (0, %d] Hz", g.Name, g.RateHz, maxWhatIfHz)
		}
		if g.DeadlineMs < 0 || g.DeadlineMs > float64(24*time.Hour/time.Millisecond) || math.IsNaN(g.DeadlineMs) {
			return fmt.Errorf("serve: what-if: group %q: deadline_ms %v: want a positive deadline up to a day", g.Name, g.DeadlineMs)
		}
	}
	for _, p := range wi.Processors {
		if p.Speed < 0 || p.Speed > 100 || math.IsNaN(p.Speed) || (p.Speed > 0 && p.Speed < 0.01) {
			return fmt.Errorf("serve: what-if: processor %q: speed %v: want a factor between 0.01 and 100", p.Name, p.Speed)
		}
	}
	return nil
}

// apply returns the changed workload and platform (copies; w and pl are
// not modified). Unknown names are errors.
func (wi *WhatIf) apply(w *workload.Workload, pl *hw.Platform) (*workload.Workload, *hw.Platform, error) {
	if wi == nil {
		return w, pl, nil
	}
	nw := *w
	nw.Groups = make([]*workload.Group, len(w.Groups))
	for i, g := range w.Groups {
		c := *g
		nw.Groups[i] = &c
	}
	for _, ch := range wi.Groups {
		g := nw.Group(ch.Name)
		if g == nil {
			return nil, nil, badf("serve: what-if: the workload has no group %q", ch.Name)
		}
		if ch.RateHz > 0 {
			period := time.Duration(float64(time.Second) / ch.RateHz)
			if period <= 0 {
				return nil, nil, badf("serve: what-if: group %q: rate_hz %v is too high", ch.Name, ch.RateHz)
			}
			if g.Deadline == g.Period {
				g.Deadline = period
			}
			g.Period = period
		}
		if ch.DeadlineMs > 0 {
			g.Deadline = time.Duration(ch.DeadlineMs * float64(time.Millisecond))
		}
	}
	np := *pl
	np.Processors = nil
	for _, pr := range pl.Processors {
		ch, ok := procChange(wi.Processors, pr.Name)
		if ok && ch.Off {
			continue
		}
		c := *pr
		if ok && ch.Speed > 0 && ch.Speed != 1 {
			c.DTypes = append([]hw.DTypeSpec(nil), pr.DTypes...)
			for i := range c.DTypes {
				c.DTypes[i].PeakGOPS *= ch.Speed
			}
			c.MemBandwidthGBs *= ch.Speed
			c.DispatchOverhead = time.Duration(float64(c.DispatchOverhead) / ch.Speed)
			c.LayerOverhead = time.Duration(float64(c.LayerOverhead) / ch.Speed)
		}
		np.Processors = append(np.Processors, &c)
	}
	for _, ch := range wi.Processors {
		found := false
		for _, pr := range pl.Processors {
			found = found || pr.Name == ch.Name
		}
		if !found {
			return nil, nil, badf("serve: what-if: platform %s has no processor %q", pl.Name, ch.Name)
		}
	}
	if len(np.Processors) == 0 {
		return nil, nil, badf("serve: what-if: every processor of %s is off", pl.Name)
	}
	return &nw, &np, nil
}

func procChange(chs []ProcChange, name string) (ProcChange, bool) {
	for _, c := range chs {
		if c.Name == name {
			return c, true
		}
	}
	return ProcChange{}, false
}

// errOffProcessor says that a plan uses a processor a what-if took away.
var errOffProcessor = errors.New("serve: what-if: the plan uses a processor that is off")

// usesOff returns the error naming the processors that are off but carry
// subgraphs of p, or nil.
func usesOff(p *plan.Plan, wi *WhatIf) error {
	if wi == nil {
		return nil
	}
	count := map[string]int{}
	for _, mp := range p.Models {
		for _, sg := range mp.Subgraphs {
			if ch, ok := procChange(wi.Processors, sg.Processor); ok && ch.Off {
				count[sg.Processor]++
			}
		}
	}
	for _, ch := range wi.Processors { // in request order: deterministic
		if n := count[ch.Name]; n > 0 {
			return fmt.Errorf("%w: %d subgraph(s) run on %s; re-plan to move them", errOffProcessor, n, ch.Name)
		}
	}
	return nil
}
