package profile

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/stats"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// A speed probe is inlay run's prediction at the host's speed now.
//
// The profile takes every figure at the processors' normal speed: the
// speed guard waits out a slow spell (SlowRatio). Where the host runs
// slower for much of the time (a KVM guest whose cores run at up to half
// speed in spells of seconds, with a neighbour on the physical core), a
// run is slower than the prediction by what the spells cost each
// subgraph, and the reference kernel cannot say by how much: on the
// 2-core host it slowed 1.6–2.1× where the plan's large subgraphs slowed
// 1.1–1.6× (docs/results/contention-log.md, "Where a slow run's time goes"). So the
// probe times the plan's own subgraphs just before the run: each on its
// processor, pinned, warm and back to back as the profile's warm runs are
// (MeasureRequest.Warmup, Reps), without the guard (Local.MeasureNow), in
// ProbeRounds rounds over the plan so that a spell of a second or two
// does not decide it, and sets the median of its rounds beside the
// store's warm median (Timing.Median) of the same subgraph: their ratio
// is how much slower it runs now than when it was profiled. An Estimator
// scaled by each processor's median ratio (SpeedProbe.ProcRatios,
// Estimator.AtSpeed) predicts the plan at that speed; the hand-offs and
// wake-ups keep their figures.
const (
	// ProbeRounds is the rounds over the plan's subgraphs.
	ProbeRounds = 3
	// ProbeReps is the timed runs of a subgraph per round, after one
	// untimed.
	ProbeReps = 5
)

// ProbedSubgraph is one plan subgraph's probe: its warm median in the
// profile and now (the median of its rounds' medians).
type ProbedSubgraph struct {
	// Model and Label name it (Label as in a run's spans: "model[layers]");
	// Proc and Processor are the processor the plan put it on.
	Model, Label string
	Proc         int
	Processor    string
	// Profiled is the store's warm median, Now the probe's.
	Profiled, Now time.Duration
}

// Ratio is Now over Profiled.
func (p ProbedSubgraph) Ratio() float64 { return float64(p.Now) / float64(p.Profiled) }

// SpeedProbe is what ProbePlan measured: the plan subgraphs the store has
// a warm figure for, in plan order, and how long the probe took.
type SpeedProbe struct {
	Subgraphs []ProbedSubgraph
	Elapsed   time.Duration
}

// Ratios are the probed subgraphs' ratios, ascending.
func (sp SpeedProbe) Ratios() []float64 {
	r := make([]float64, len(sp.Subgraphs))
	for i, s := range sp.Subgraphs {
		r[i] = s.Ratio()
	}
	slices.Sort(r)
	return r
}

// ProbePlan times p's subgraphs on l now (see SpeedProbe) against the
// warm figures device's profile stored in st. A subgraph the store has no
// warm figure for (unmeasured, or failed) is left out: it has nothing to
// be set against. A subgraph that fails to run now is an error.
func ProbePlan(ctx context.Context, l *Local, st *Store, device string, w *workload.Workload, pl *hw.Platform, p *plan.Plan) (SpeedProbe, error) {
	start := time.Now()
	jobs, err := planJobs(w, pl, p)
	if err != nil {
		return SpeedProbe{}, err
	}
	twins := Twins(pl)
	type probe struct {
		sub  ProbedSubgraph
		req  MeasureRequest
		runs []time.Duration
	}
	var probes []*probe
	for _, j := range jobs {
		k, err := subgraphKey(device, pl, twins, j.LG, j.Set, j.Config)
		if err != nil {
			return SpeedProbe{}, err
		}
		r, found, err := st.Get(k)
		if err != nil {
			return SpeedProbe{}, err
		}
		if !found || r.Error != "" || r.Median <= 0 {
			continue
		}
		model, err := onnx.ExportSubgraph(j.LG, j.Set)
		if err != nil {
			continue // it could not have been measured either
		}
		pr := pl.Processors[j.Config.Proc]
		probes = append(probes, &probe{
			sub: ProbedSubgraph{Model: j.Model, Label: fmt.Sprintf("%s[%s]", j.Model, j.Set.Key()), Proc: j.Config.Proc, Processor: pr.Name,
				Profiled: r.Median},
			req: MeasureRequest{Model: model, Inputs: j.Inputs, Processor: pr.Name, Backend: j.Config.Backend,
				DType: j.Config.DType.String(), Warmup: 1, Reps: ProbeReps},
		})
	}
	for range ProbeRounds {
		for _, pb := range probes {
			t, err := l.MeasureNow(ctx, pb.req)
			if err != nil {
				return SpeedProbe{}, fmt.Errorf("profile: speed probe: %s: %w", pb.sub.Label, err)
			}
			pb.runs = append(pb.runs, t.Median)
		}
	}
	out := SpeedProbe{Subgraphs: make([]ProbedSubgraph, len(probes))}
	for i, pb := range probes {
		pb.sub.Now = stats.Median(pb.runs)
		out.Subgraphs[i] = pb.sub
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// ProcRatios is, per processor (by index), the median of its probed
// subgraphs' ratios: how much slower the processor runs the plan's work
// now than when it was profiled. The median over the subgraphs, not each
// subgraph's own ratio, is what AtSpeed applies: each profiled figure was
// taken at its own moment of the profile, in whatever state within the
// speed guard's band the host was then (up to SlowRatio apart), so one
// subgraph's ratio carries that moment's noise, and the median over the
// processor's subgraphs is the profile's typical moment against now.
func (sp SpeedProbe) ProcRatios() map[int]float64 {
	by := map[int][]float64{}
	for _, s := range sp.Subgraphs {
		if q := s.Ratio(); q > 0 {
			by[s.Proc] = append(by[s.Proc], q)
		}
	}
	out := make(map[int]float64, len(by))
	for p, qs := range by {
		out[p] = stats.Median(qs)
	}
	return out
}

// SpeedEstimator is an Estimator whose subgraph figures are scaled by
// their processor's probe ratio (SpeedProbe.ProcRatios; Estimator.AtSpeed);
// everything else (transfers, hand-offs, contention loads, processors not
// probed) is the Estimator's.
type SpeedEstimator struct {
	*Estimator
	ratio map[int]float64
}

// AtSpeed returns e at the speed sp measured: each subgraph's figure
// times its processor's ratio.
func (e *Estimator) AtSpeed(sp SpeedProbe) *SpeedEstimator {
	return &SpeedEstimator{Estimator: e, ratio: sp.ProcRatios()}
}

var _ cost.Estimator = (*SpeedEstimator)(nil)

// Subgraph is the Estimator's figure times the ratio of the processor it
// runs on, when that processor was probed.
func (s *SpeedEstimator) Subgraph(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (time.Duration, error) {
	d, err := s.Estimator.Subgraph(lg, set, on)
	if err != nil {
		return d, err
	}
	if q, ok := s.ratio[on.Proc]; ok {
		d = time.Duration(float64(d) * q)
	}
	return d, nil
}
