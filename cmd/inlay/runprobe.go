package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/workload"
)

// runProbe is inlay run --probe: the speed probe of the plan's subgraphs
// taken before the run (profile.ProbePlan) and the prediction at that
// speed, per group in the run's order (set by predict after the run).
type runProbe struct {
	sp   profile.SpeedProbe
	now  []time.Duration
	warn string
}

// probeNow times the plan's subgraphs on this machine now against the
// store's figures (nil when the store has none of them).
func probeNow(ctx context.Context, cmd *cobra.Command, f runFlags, pe *profile.Estimator, w *workload.Workload, pl *hw.Platform, p *plan.Plan) (*runProbe, error) {
	st, err := profile.Open(profilesPath(cmd))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	dev, err := profile.NewLocal(f.ortLib, pl)
	if err != nil {
		return nil, err
	}
	if !f.json {
		fmt.Fprintf(cmd.ErrOrStderr(), "probing the plan's subgraphs at the host's speed now (%d rounds)…\n", profile.ProbeRounds)
	}
	sp, err := profile.ProbePlan(ctx, dev, st, pe.Device(), w, pl, p)
	if err != nil {
		return nil, err
	}
	if len(sp.Subgraphs) == 0 {
		return nil, nil
	}
	return &runProbe{sp: sp}, nil
}

// predict sets the prediction at the probe's speed for the run c made
// (res): c under the estimator scaled by the probe. A failure is kept as
// a warning; the run's own prediction stands.
func (r *runProbe) predict(c runtime.Config, pe *profile.Estimator, res *runtime.Result) {
	c.Cost = pe.AtSpeed(r.sp)
	c.PredictSpans = false
	at := &runtime.Result{Groups: slices.Clone(res.Groups)}
	if err := runtime.Predict(c, at); err != nil {
		r.warn = fmt.Sprintf("prediction at the speed now: %v", err)
		return
	}
	r.now = make([]time.Duration, len(at.Groups))
	for i, g := range at.Groups {
		r.now[i] = g.PredictedP50
	}
}

// p50 is group gi's p50 predicted at the speed now (0 when predict failed).
func (r *runProbe) p50(gi int) time.Duration {
	if gi < len(r.now) {
		return r.now[gi]
	}
	return 0
}

// line says what the probe measured.
func (r *runProbe) line(pl *hw.Platform) string {
	q := r.sp.Ratios()
	ratios := r.sp.ProcRatios()
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(ratios)) {
		parts = append(parts, fmt.Sprintf("%s %.2f×", pl.Processors[p].Name, ratios[p]))
	}
	s := fmt.Sprintf("speed probe before the run (%v, the plan's %d subgraph(s), each %.2f–%.2f× its profiled warm figure): %s (median per processor); \"at speed now\" predicts with each processor's figures times its ratio",
		r.sp.Elapsed.Round(10*time.Millisecond), len(q), q[0], q[len(q)-1], strings.Join(parts, ", "))
	if r.warn != "" {
		s += "; " + r.warn
	}
	return s
}

// runProbeJSON is --probe's probe in --json.
type runProbeJSON struct {
	ElapsedS float64 `json:"elapsed_s"`
	// Processors are the ratios the prediction at speed now applies.
	Processors []runProbedProc     `json:"processors"`
	Warning    string              `json:"warning,omitempty"`
	Subgraphs  []runProbedSubgraph `json:"subgraphs"`
}

type runProbedProc struct {
	Processor string  `json:"processor"`
	Ratio     float64 `json:"ratio"`
}

type runProbedSubgraph struct {
	Subgraph   string  `json:"subgraph"`
	Processor  string  `json:"processor"`
	ProfiledMS float64 `json:"profiled_ms"`
	NowMS      float64 `json:"now_ms"`
	Ratio      float64 `json:"ratio"`
}

func (r *runProbe) json(pl *hw.Platform) *runProbeJSON {
	j := &runProbeJSON{ElapsedS: r.sp.Elapsed.Seconds(), Warning: r.warn, Processors: []runProbedProc{}, Subgraphs: []runProbedSubgraph{}}
	ratios := r.sp.ProcRatios()
	for _, p := range slices.Sorted(maps.Keys(ratios)) {
		j.Processors = append(j.Processors, runProbedProc{Processor: pl.Processors[p].Name, Ratio: ratios[p]})
	}
	for _, s := range r.sp.Subgraphs {
		j.Subgraphs = append(j.Subgraphs, runProbedSubgraph{Subgraph: s.Label, Processor: s.Processor,
			ProfiledMS: msOf(s.Profiled), NowMS: msOf(s.Now), Ratio: s.Ratio()})
	}
	return j
}
