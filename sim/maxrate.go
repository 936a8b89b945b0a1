package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/ratebound"
)

// Bisection settings of MaxSustainableScale.
const (
	// ScaleTolerance is the relative width at which the bisection stops.
	ScaleTolerance = 1e-3
	// TinyScaleFraction places the bracket's low end: the load limit times
	// this fraction is the "tiny rate" a feasible program must sustain.
	TinyScaleFraction = 1e-4
)

// LoadLimit is the rate scale at which the busiest server saturates: for
// each processor p, Concurrency_p / Σ_g (rate_g · Σ_{jobs of g on p} duration),
// and for each shared link 1 / Σ_g (rate_g · Σ_{transfers of g on it} duration);
// the minimum over all of them, with the name of the server that attains it.
// Above this scale the offered work exceeds the capacity, queues grow without
// bound and, over a long enough run, every request misses; no scale above it
// is sustainable, however short a finite simulation looks fine. It is +Inf
// when the program does no work.
func LoadLimit(p *dispatch.Program) (scale float64, server string) {
	procLoad := make([]float64, len(p.Procs)) // busy seconds per second at scale 1
	linkLoad := make([]float64, len(p.Links))
	for _, g := range p.Groups {
		rate := float64(time.Second) / float64(g.Period)
		for _, ji := range g.Jobs {
			j := &p.Jobs[ji]
			secs := j.Duration.Seconds()
			if j.Kind == dispatch.Compute {
				procLoad[j.Proc] += rate * secs
			} else if p.Links[j.Link].Shared {
				linkLoad[j.Link] += rate * secs
			}
		}
	}
	scale = math.Inf(1)
	for i, l := range procLoad {
		if l > 0 {
			if s := float64(p.Procs[i].Concurrency) / l; s < scale {
				scale, server = s, "processor "+p.Procs[i].Name
			}
		}
	}
	for i, l := range linkLoad {
		if l > 0 {
			if s := 1 / l; s < scale {
				scale, server = s, "link "+p.Links[i].Name
			}
		}
	}
	return scale, server
}

// Sustained is the outcome of MaxSustainableScale.
type Sustained struct {
	// Scale is the largest rate scale found sustainable; 0 when infeasible.
	Scale float64
	// Feasible is false when even a tiny rate misses deadlines.
	Feasible bool
	// Limit says what stops a higher scale: the saturated server when the
	// load limit binds, else deadline misses; for an infeasible program, the
	// groups that miss and by how much.
	Limit string
	// Runs is the number of simulations the search ran.
	Runs int
}

// ErrNoWork is returned by MaxSustainableScale for a program whose jobs all
// take zero time: any rate is sustainable and there is no maximum.
var ErrNoWork = errors.New("sim: the program does no work, so its rate is unbounded")

// MaxSustainableScale finds the largest common scale of every group's
// nominal rate at which at least 99 % of each group's measured requests meet
// their deadline over the run (Options.Horizon, default see Options), and
// returns it with the run at that scale (for an infeasible program: 0, with
// the failing run at the bracket's low end, whose Scale says where).
//
// The search bracket is [LoadLimit·1e-4, LoadLimit]: no scale above the load
// limit is sustainable in the long run (see LoadLimit), and a program that
// cannot meet deadlines at a ten-thousandth of it is reported infeasible with
// scale 0 (its requests miss even without queueing: a single request's
// latency, or the collision of simultaneously released groups, exceeds a
// deadline — Result.Misses says which group and by how much). The search
// tries the load limit (if it passes it is the answer), then half of it
// (the usual case: the answer lies between), else the bracket's low end.
// Then bisection keeps a passing low end and a failing high end: geometric
// (midpoint √(lo·hi)) while hi/lo > 2, then arithmetic until
// (hi-lo)/hi ≤ ScaleTolerance (1e-3): about 11 runs in the usual case, at
// most about 17. Search runs stop as soon as a group has certainly missed
// more than 1 % of its requests. The answer is the last passing scale.
//
// The miss rate is not strictly monotone in the scale: with periodic
// arrivals a higher rate can shift releases out of a collision, so a scale
// below the answer may fail and one above may pass. Bisection therefore
// finds a boundary between a passing and a failing scale, not necessarily
// the largest passing one; it is deterministic for a program and options.
//
// opt.Scale is ignored; opt.NoSpans applies to the returned run only.
func MaxSustainableScale(prog *Program, opt Options) (float64, *Result, error) {
	s, res, err := Sustain(prog, opt)
	return s.Scale, res, err
}

// Sustain is MaxSustainableScale with the search's explanation.
func Sustain(prog *Program, opt Options) (Sustained, *Result, error) {
	return SustainContext(context.Background(), prog, opt)
}

// SustainContext is Sustain, abandoned with ctx's error between runs once
// ctx is done.
func SustainContext(ctx context.Context, prog *Program, opt Options) (Sustained, *Result, error) {
	if prog == nil || prog.Program == nil {
		return Sustained{}, nil, errors.New("sim: nil program")
	}
	if err := prog.Validate(); err != nil {
		return Sustained{}, nil, fmt.Errorf("sim: %w", err)
	}
	hi, server := LoadLimit(prog.Program)
	if math.IsInf(hi, 1) {
		return Sustained{}, nil, ErrNoWork
	}
	var out Sustained
	spans := !opt.NoSpans
	// try runs a search step: no spans, stopped as soon as it fails.
	try := func(s float64) (*Result, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o := opt
		o.Scale, o.NoSpans, o.failFast = s, true, true
		out.Runs++
		return Run(prog, o)
	}
	// final is the run returned at the answer: the search's own passing
	// run, or a rerun with spans when they are wanted.
	final := func(s float64, passed *Result) (*Result, error) {
		if !spans && passed != nil {
			return passed, nil
		}
		o := opt
		o.Scale = s
		out.Runs++
		return Run(prog, o)
	}
	top, err := try(hi)
	if err != nil {
		return out, nil, err
	}
	if top.Meets() {
		out.Scale, out.Feasible, out.Limit = hi, true, server+" saturates"
		res, err := final(hi, top)
		return out, res, err
	}
	// The answer is usually within a factor 2 of the load limit.
	lo := hi / 2
	low, err := try(lo)
	if err != nil {
		return out, nil, err
	}
	if !low.Meets() {
		hi, top = lo, low
		lo = hi * TinyScaleFraction * 2
		if low, err = try(lo); err != nil {
			return out, nil, err
		}
		if !low.Meets() {
			o := opt
			o.Scale = lo
			out.Runs++
			res, err := Run(prog, o)
			if err != nil {
				return out, nil, err
			}
			out.Limit = fmt.Sprintf("infeasible: even at rate scale %.3g %s", lo, res.Misses)
			return out, res, nil
		}
	}
	for hi/lo > 2 || (hi-lo) > ScaleTolerance*hi {
		mid := (lo + hi) / 2
		if hi/lo > 2 {
			mid = math.Sqrt(lo * hi)
		}
		r, err := try(mid)
		if err != nil {
			return out, nil, err
		}
		if r.Meets() {
			lo, low = mid, r
		} else {
			hi, top = mid, r
		}
	}
	res, err := final(lo, low)
	if err != nil {
		return out, nil, err
	}
	out.Scale, out.Feasible = lo, true
	out.Limit = fmt.Sprintf("deadline misses above scale %.4g (%s)", lo, top.Misses)
	return out, res, nil
}

// InfeasibleReason explains a plan that does not sustain the nominal
// rates (s.Scale < 1 or infeasible), with the bound's reason when no plan
// can (b.Scale < 1).
func InfeasibleReason(s Sustained, b ratebound.Bound) string {
	var parts []string
	switch {
	case !s.Feasible && strings.HasPrefix(s.Limit, "infeasible"):
		parts = append(parts, s.Limit)
	case !s.Feasible:
		parts = append(parts, "infeasible: this plan misses deadlines at any rate", s.Limit)
	default:
		parts = append(parts, fmt.Sprintf("infeasible at the nominal rates: this plan sustains %.3g× of them", s.Scale))
		if s.Limit != "" {
			parts = append(parts, s.Limit)
		}
	}
	if b.Scale < 1 && b.Why != "" {
		parts = append(parts, fmt.Sprintf("no plan can do better than %.3g×: %s", b.Scale, b.Why))
	}
	return strings.Join(parts, "; ")
}
