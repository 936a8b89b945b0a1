package sim

import (
	"math"
	"sort"
	"time"
)

// Outcome is a simulation's result as the front ends print it (the
// ClusterOutcome of serve/openapi.yaml): inlay cluster simulate --json,
// the web API's /api/cluster/simulate and inlay-scheduler replay --json.
// The per-job results are left out (--per-job writes them); fields a
// front end does not fill are left out too.
type Outcome struct {
	*Result
	// WallSeconds is the run's wall-clock time, to the millisecond.
	WallSeconds float64 `json:"wall_s"`
	// Speedup and SimAvgJCT are a replay's: trace seconds per real
	// second, and with --compare the simulator's average JCT.
	Speedup   float64 `json:"speedup,omitzero"`
	SimAvgJCT float64 `json:"sim_avg_jct_hours,omitempty"`
	// JCTHours are the finished window jobs' completion times, sorted
	// (web API, for the CDF).
	JCTHours []float64 `json:"jct_hours,omitzero"`
	// Timeline is the first jobs of the window (at most 300) with their
	// spans, in hours (web API).
	Timeline []JobLine `json:"timeline,omitzero"`
}

// NewOutcome is r's outcome after wall of wall-clock time, without the
// per-job results.
func NewOutcome(r *Result, wall time.Duration) *Outcome {
	view := *r
	view.PerJob = nil
	return &Outcome{Result: &view, WallSeconds: math.Round(wall.Seconds()*1000) / 1000}
}

// AddTimeline fills JCTHours and Timeline from r's per-job results (the
// web API's charts).
func (o *Outcome) AddTimeline(r *Result) {
	o.JCTHours, o.Timeline = []float64{}, []JobLine{}
	for _, j := range r.PerJob {
		if j.ID < r.Window[0] || j.ID > r.Window[1] {
			continue
		}
		if j.Finish >= 0 {
			o.JCTHours = append(o.JCTHours, j.JCT/3600)
		}
		if len(o.Timeline) < 300 {
			jl := JobLine{ID: j.ID, Type: j.Type, GPUs: j.GPUs, ArrivalH: j.Arrival / 3600, FinishH: -1, Spans: []SpanRun{}}
			if j.Finish >= 0 {
				jl.FinishH = j.Finish / 3600
			}
			for _, sp := range j.Spans {
				jl.Spans = append(jl.Spans, SpanRun{StartH: sp.Start / 3600, EndH: sp.End / 3600, GPU: sp.GPU, Shared: sp.With >= 0})
			}
			o.Timeline = append(o.Timeline, jl)
		}
	}
	sort.Float64s(o.JCTHours)
}
