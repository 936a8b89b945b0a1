package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// ProbeConfig says where and how to measure the runtime's hand-off.
type ProbeConfig struct {
	Platform *hw.Platform
	// Library is ONNX Runtime's shared library (ort.Open).
	Library string
	// NoPin measures with the workers unpinned (Config.NoPin).
	NoPin bool
	// Duration is how long each of the probe's two runs lasts; 0 means
	// DefaultProbeDuration.
	Duration time.Duration
	// Procs are the two processors the hand-off is measured between; nil
	// means the platform's first two that run ort-cpu (ProbePair).
	Procs []string
}

// ErrNoProbePair is the error (matched with errors.Is) of a hand-off
// probe on a platform with fewer than two processors that run Backend:
// there is no hand-off between processors to measure there.
var ErrNoProbePair = errors.New("fewer than two processors run " + Backend)

// ProbePair returns the two processors a hand-off probe on pl measures
// between: procs when given (exactly two distinct processors of pl that
// run Backend), else the platform's first two that run it. A platform
// without two such processors is an error that wraps ErrNoProbePair.
func ProbePair(pl *hw.Platform, procs []string) ([2]string, error) {
	if pl == nil {
		return [2]string{}, fmt.Errorf("runtime: hand-off probe: no platform")
	}
	if procs == nil {
		for _, p := range pl.Processors {
			if slices.Contains(p.Backends, Backend) {
				procs = append(procs, p.Name)
			}
		}
		if len(procs) < 2 {
			return [2]string{}, fmt.Errorf("runtime: hand-off probe: platform %s: %w", pl.Name, ErrNoProbePair)
		}
		return [2]string{procs[0], procs[1]}, nil
	}
	if len(procs) != 2 {
		return [2]string{}, fmt.Errorf("runtime: hand-off probe: %d processors given, want two", len(procs))
	}
	var pair [2]string
	for i, name := range procs {
		id, err := pl.Find(name)
		if err != nil {
			return [2]string{}, fmt.Errorf("runtime: hand-off probe: unknown processor %q (platform %s has %s)", name, pl.Name, strings.Join(pl.Names(), ", "))
		}
		pr := pl.Processors[id]
		if !slices.Contains(pr.Backends, Backend) {
			return [2]string{}, fmt.Errorf("runtime: hand-off probe: processor %s does not run %s", pr.Name, Backend)
		}
		pair[i] = pr.Name
	}
	if pair[0] == pair[1] {
		return [2]string{}, fmt.Errorf("runtime: hand-off probe: processor %s given twice, want two different ones", pair[0])
	}
	return pair, nil
}

// DefaultProbeDuration is a probe run's length: at the probe's 40 Hz,
// about 60 requests of 7 hand-offs each.
const DefaultProbeDuration = 1500 * time.Millisecond

// probeChunks is how many subgraphs the probe cuts its model into.
const probeChunks = 8

// HandOffProbe is what ProbeHandOff measured: the median delay from a
// subgraph's end to the start of the next one, which waits for it, when
// both run on one processor (Same) and when they alternate between two
// (Cross), over Samples hand-offs each (at least).
type HandOffProbe struct {
	Same, Cross time.Duration
	Samples     int
	Procs       [2]string
	// CrossAfter is the hand-off between the two processors by how long
	// the subgraph it follows ran (cost.HandOffCurve): the worker that
	// takes the next subgraph has idled about that long, and an idle core
	// wakes more slowly the longer it has been halted, a virtual
	// machine's most of all. On a 2-core KVM guest (AMD EPYC), pinned, a
	// run of examples/host_face_voice.yaml's heft plan handed off across
	// in a median 51 µs after 0.1–0.3 ms subgraphs, 63 µs after 0.3–1 ms
	// ones and 111 µs after longer ones; this probe there gave 45 µs after
	// 0.11 ms, 55 µs after 0.9 ms and 74 µs after 2 ms, where Cross, the
	// median over the small network's chunks, said 47 µs. Empty when no
	// span length had enough hand-offs (crossAfterMin).
	CrossAfter cost.HandOffCurve
	// Starts are the probe runs' delays from a request's arrival to its
	// first subgraph's start, by the way the event loop waited for the
	// arrivals.
	Starts StartDelays
}

// crossAfterBounds split the hand-offs between processors by the span
// of the subgraph before them, a factor of about three apart; a bin with
// fewer than crossAfterMin hand-offs gives no point.
var crossAfterBounds = []time.Duration{150 * time.Microsecond, 500 * time.Microsecond, 1500 * time.Microsecond}

const crossAfterMin = 20

// crossCurve bins pairs (a subgraph's span, the hand-off after it) by the
// span (crossAfterBounds) and gives each bin with at least crossAfterMin
// pairs as a point: the bin's median span and median hand-off.
func crossCurve(pairs []crossPair) cost.HandOffCurve {
	bins := make([][]crossPair, len(crossAfterBounds)+1)
	for _, p := range pairs {
		i, _ := slices.BinarySearch(crossAfterBounds, p.ran)
		bins[i] = append(bins[i], p)
	}
	var out cost.HandOffCurve
	for _, b := range bins {
		if len(b) < crossAfterMin {
			continue
		}
		ran := make([]time.Duration, len(b))
		gap := make([]time.Duration, len(b))
		for i, p := range b {
			ran[i], gap[i] = p.ran, p.gap
		}
		slices.Sort(ran)
		slices.Sort(gap)
		out = append(out, cost.HandOffPoint{After: ran[len(ran)/2], Gap: gap[len(gap)/2], Samples: len(b)})
	}
	return out
}

// StartDelays are the median delays from a request's scheduled arrival to
// the start of its first subgraph that probe runs saw: the event loop's
// wake-up to the arrival (Result.ArrivalLag), its decision and the hand-off
// to the first subgraph's worker, none of which the simulator charges
// (its source subgraphs start on their arrival). They are kept by the
// loop's two ways to wait for an arrival (Config.LoopSleeps): Sleep when it
// slept in the kernel to each arrival, Poll when it polled the clock for
// the last Config.ArrivalSpin before it. A count of 0 requests means that
// way was not measured. A run's prediction adds the delay of the way its
// loop will wait (inlay run, profile.Recorded.StartDelay).
type StartDelays struct {
	Sleep, Poll                 time.Duration
	SleepRequests, PollRequests int
}

// For returns the delay of the way the loop waits (sleeps:
// Config.LoopSleeps) and whether that way was measured.
func (a StartDelays) For(sleeps bool) (time.Duration, bool) {
	if sleeps {
		return a.Sleep, a.SleepRequests > 0
	}
	return a.Poll, a.PollRequests > 0
}

// add merges one run's median delay over n requests into the way it
// waited (the mean of the runs' medians, weighted by their requests).
func (a *StartDelays) add(sleeps bool, d time.Duration, n int) {
	if n <= 0 {
		return
	}
	m, c := &a.Poll, &a.PollRequests
	if sleeps {
		m, c = &a.Sleep, &a.SleepRequests
	}
	*m = time.Duration((int64(*m)*int64(*c) + int64(d)*int64(n)) / int64(*c+n))
	*c += n
}

// ProbeHandOff measures the runtime's own delay between dependent
// subgraphs, which a profile that times one subgraph at a time does not
// see (cost.HandOffEstimator): it runs a small zoo network (MobileNetV2
// at 64×64) cut into eight subgraphs through Run, the real workers and
// dispatcher, at 40 requests a second so that the workers go idle between
// requests as in a plan; once with every subgraph on the first processor
// and once alternating between the two, and takes the median gap in the
// spans; then alternating once more at 224×224 (chunks of about a
// millisecond), and bins every hand-off of the alternating runs by the
// span before it (CrossAfter). Each run's delay from arrival to the first subgraph's start is
// kept by the way its event loop waited (Starts); a way that a run with
// the probe's pinning can take and neither run took (pinned, the loop
// sleeps only when the workers hold every core) is measured by one more
// run of half the length, the alternating plan with the loop forced into
// it. It needs ONNX Runtime and a platform with two
// ort-cpu processors: without them its error wraps ErrNoProbePair.
func ProbeHandOff(ctx context.Context, pc ProbeConfig) (HandOffProbe, error) {
	pl := pc.Platform
	if pl == nil {
		return HandOffProbe{}, fmt.Errorf("runtime: hand-off probe: no platform")
	}
	pair, err := ProbePair(pl, pc.Procs)
	if err != nil {
		return HandOffProbe{}, err
	}
	procs := pair[:]
	out := HandOffProbe{Procs: pair}
	small, err := probeWorkload(pl, probeInput)
	if err != nil {
		return HandOffProbe{}, err
	}
	dur := pc.Duration
	if dur <= 0 {
		dur = DefaultProbeDuration
	}
	config := func(cross bool) (Config, map[string]int) { return probeConfig(pc, procs, small, cross, dur) }
	run := func(c Config, labels map[string]int) (*Result, error) {
		res, err := Run(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("runtime: hand-off probe: %w", err)
		}
		if starts := probeStarts(res, labels); len(starts) > 0 {
			slices.Sort(starts)
			out.Starts.add(c.LoopSleeps(), starts[len(starts)/2], len(starts))
		}
		return res, nil
	}
	var pairs []crossPair
	for _, cross := range []bool{false, true} {
		c, labels := config(cross)
		res, err := run(c, labels)
		if err != nil {
			return HandOffProbe{}, err
		}
		ps := probePairs(res, labels)
		gaps := probeGaps(ps)
		if len(gaps) == 0 {
			return HandOffProbe{}, fmt.Errorf("runtime: hand-off probe: the run timed no hand-off (%d requests completed)", res.Groups[0].Completed)
		}
		slices.Sort(gaps)
		med := gaps[len(gaps)/2]
		if cross {
			out.Cross = med
			pairs = append(pairs, ps...)
		} else {
			out.Same = med
		}
		if out.Samples == 0 || len(gaps) < out.Samples {
			out.Samples = len(gaps)
		}
	}
	// The small network's chunks run for tens of microseconds; a plan's
	// subgraphs run for up to milliseconds, and the worker that takes
	// over has idled that long. The same alternating plan on a larger
	// input (chunks of a few hundred microseconds to a millisecond or
	// more) gives the hand-off after longer spans.
	large, err := probeWorkload(pl, probeLargeInput)
	if err != nil {
		return HandOffProbe{}, err
	}
	c, labels := probeConfig(pc, procs, large, true, dur)
	res, err := run(c, labels)
	if err != nil {
		return HandOffProbe{}, err
	}
	pairs = append(pairs, probePairs(res, labels)...)
	out.CrossAfter = crossCurve(pairs)
	// Unpinned, the loop always has a core and polls; pinned, it sleeps
	// when the plan's workers hold every core and polls otherwise.
	ways := []bool{false}
	if !pc.NoPin {
		ways = append(ways, true)
	}
	for _, sleeps := range ways {
		if _, ok := out.Starts.For(sleeps); ok {
			continue
		}
		c, labels := config(true)
		c.Duration, c.ArrivalSpin = dur/2, DefaultArrivalSpin
		if sleeps {
			c.ArrivalSpin = -1
		}
		if _, err := run(c, labels); err != nil {
			return HandOffProbe{}, err
		}
	}
	return out, nil
}

// probeInput and probeLargeInput are the probe network's input sizes:
// MobileNetV2 at 64×64 cuts into chunks of tens of microseconds on a
// phone-class or server core, at 224×224 into chunks of a few hundred
// microseconds to a few milliseconds.
const probeInput, probeLargeInput = 64, 224

// probeWorkload is the probe's workload on pl: MobileNetV2 at size×size,
// 40 requests a second.
func probeWorkload(pl *hw.Platform, size int) (*workload.Workload, error) {
	w, err := workload.LoadData([]byte(fmt.Sprintf(`platform: %s
models:
  - {name: probe, zoo: mobilenet_v2, input: [1, 3, %d, %d]}
groups:
  - {name: probe, models: [probe], rate_hz: 40, deadline_ms: 25}
`, pl.Name, size, size)), "handoff-probe.yaml")
	if err != nil {
		return nil, fmt.Errorf("runtime: hand-off probe: %w", err)
	}
	if n := len(w.Models[0].Layers.Layers); n < probeChunks {
		return nil, fmt.Errorf("runtime: hand-off probe: the probe network has %d layers, fewer than %d", n, probeChunks)
	}
	return w, nil
}

// probeConfig is a probe run of w's network cut into probeChunks
// subgraphs, all on the first of procs or (cross) alternating between
// the two, and the labels of its subgraphs by position.
func probeConfig(pc ProbeConfig, procs []string, w *workload.Workload, cross bool, dur time.Duration) (Config, map[string]int) {
	n := len(w.Models[0].Layers.Layers)
	mp := plan.ModelPlan{Model: "probe", Hash: w.Models[0].Graph.Hash}
	labels := map[string]int{}
	for c := 0; c < probeChunks; c++ {
		set := graph.Range(c*n/probeChunks, (c+1)*n/probeChunks)
		proc := procs[0]
		if cross {
			proc = procs[c%2]
		}
		mp.Subgraphs = append(mp.Subgraphs, plan.Subgraph{Layers: set, Processor: proc, Backend: Backend, DType: graph.Float32.String()})
		labels[fmt.Sprintf("probe[%s]", set.Key())] = c
	}
	p := &plan.Plan{Planner: "handoff-probe", Platform: pc.Platform.Name, Models: []plan.ModelPlan{mp}}
	return Config{Workload: w, Platform: pc.Platform, Plan: p, Cost: cost.NewAnalytic(pc.Platform), Library: pc.Library,
		Duration: dur, Seed: 1, Spans: true, NoPin: pc.NoPin, Backlog: -1, DrainTimeout: 30 * time.Second}, labels
}

// probeStarts are, per request, the delays from its scheduled arrival to
// its first probe subgraph's start, from a run's spans (labels as for
// probePairs; negative ones, clock noise, count as 0), in request order.
func probeStarts(res *Result, labels map[string]int) []time.Duration {
	first := map[int]time.Duration{}
	for _, s := range res.Spans {
		if c, ok := labels[strings.TrimSpace(s.Label)]; ok && c == 0 {
			first[s.Request] = max(s.Start-s.Arrival, 0)
		}
	}
	reqs := slices.Sorted(maps.Keys(first))
	out := make([]time.Duration, len(reqs))
	for i, id := range reqs {
		out[i] = first[id]
	}
	return out
}

// probeGaps are the hand-offs of pairs (probePairs), in their order.
func probeGaps(pairs []crossPair) []time.Duration {
	gaps := make([]time.Duration, len(pairs))
	for i, p := range pairs {
		gaps[i] = p.gap
	}
	return gaps
}

// crossPair is one hand-off of a probe run: the span of the subgraph
// before it and the gap to the next one's start.
type crossPair struct{ ran, gap time.Duration }

// probePairs are, per request in request order, each probe subgraph's
// span and the gap from its end to the next one's start, from a run's
// spans (labels maps a span's label to its subgraph's position; negative
// gaps, clock noise, count as 0; spans of other work and incomplete pairs
// are left out).
func probePairs(res *Result, labels map[string]int) []crossPair {
	type at struct{ start, end time.Duration }
	byReq := map[int][]at{}
	for _, s := range res.Spans {
		c, ok := labels[strings.TrimSpace(s.Label)]
		if !ok {
			continue
		}
		r := byReq[s.Request]
		if r == nil {
			r = make([]at, probeChunks)
			for i := range r {
				r[i].start = -1
			}
			byReq[s.Request] = r
		}
		r[c] = at{s.Start, s.End}
	}
	var pairs []crossPair
	for _, id := range slices.Sorted(maps.Keys(byReq)) {
		r := byReq[id]
		for c := 1; c < len(r); c++ {
			if r[c-1].start < 0 || r[c].start < 0 {
				continue
			}
			pairs = append(pairs, crossPair{ran: r[c-1].end - r[c-1].start, gap: max(r[c].start-r[c-1].end, 0)})
		}
	}
	return pairs
}
