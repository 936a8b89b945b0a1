package profile

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/onnx"
)

// CorunLoad is work run on a neighbouring processor while a subgraph is
// timed: the streaming kernel (StreamBytes > 0) or a real subgraph (Model).
type CorunLoad struct {
	// Processor names the neighbour that runs the load.
	Processor string
	// StreamBytes is the buffer the streaming kernel copies, over and
	// over (larger than the shared cache, so that it moves through DRAM);
	// Duty in (0, 1] is the share of the time it copies (it sleeps the
	// rest, in slices of StreamSlice): the intensity.
	StreamBytes int64
	Duty        float64
	// Models are real standalone subgraphs, run one after the other
	// round and round.
	Models []CorunModel
}

// CorunModel is one real subgraph of a co-run load.
type CorunModel struct {
	Model  []byte
	Inputs []TensorSpec
}

// CorunCondition is one set of loads run together, one per neighbour.
type CorunCondition struct {
	Loads []CorunLoad
}

// CorunTiming is the subgraph's timing beside one condition.
type CorunTiming struct {
	// Median of the back-to-back runs beside the loads.
	Median time.Duration
	Reps   int
	// StreamGBs is the bandwidth the streaming kernels reached together
	// (10⁹ B/s; 0 for real subgraphs).
	StreamGBs float64
}

// StreamSlice is the streaming kernel's duty-cycle period.
const StreamSlice = 2 * time.Millisecond

// DefaultStreamBytes is the streaming kernel's buffer: 32 MiB, four times
// the host preset's LLC.
const DefaultStreamBytes = 32 << 20

// CorunDuties are the intensities inlay profile --corun runs the streaming
// kernel at.
var CorunDuties = []float64{0.25, 0.5, 1}

func (l CorunLoad) validate() error {
	switch {
	case l.Processor == "":
		return fmt.Errorf("profile: measure: co-run load without a processor")
	case l.StreamBytes > 0 && len(l.Models) > 0:
		return fmt.Errorf("profile: measure: co-run load on %q is both a stream and a model", l.Processor)
	case l.StreamBytes > 0 && !(l.Duty > 0 && l.Duty <= 1):
		return fmt.Errorf("profile: measure: co-run stream on %q: duty %v not in (0, 1]", l.Processor, l.Duty)
	case l.StreamBytes > 1<<31:
		return fmt.Errorf("profile: measure: co-run stream on %q: %d bytes is more than 2 GiB", l.Processor, l.StreamBytes)
	case l.StreamBytes <= 0 && len(l.Models) == 0:
		return fmt.Errorf("profile: measure: co-run load on %q is neither a stream nor a model", l.Processor)
	}
	return nil
}

// CorunPoint is one co-run measurement of a subgraph: its slowdown over
// its back-to-back time alone beside a neighbour load of model load L
// (Σ over shared resources of min(1, use)).
type CorunPoint struct {
	Load     float64 `json:"load"`
	GBs      float64 `json:"gbs,omitempty"`
	Slowdown float64 `json:"slowdown"`
}

// FitSensitivity fits k of the contention model (package cost) to points
// by least squares through slowdown 1 at load 0, clamped to
// [0, hw.MaxContentionSensitivity]; rms is the fit's root-mean-square error
// in slowdown. No point with a load gives k 0.
func FitSensitivity(points []CorunPoint) (k, rms float64) {
	var num, den float64
	for _, p := range points {
		num += (p.Slowdown - 1) * p.Load
		den += p.Load * p.Load
	}
	if den > 0 {
		k = math.Min(hw.MaxContentionSensitivity, math.Max(0, num/den))
	}
	for _, p := range points {
		e := cost.Slowdown(k, p.Load) - p.Slowdown
		rms += e * e
	}
	if len(points) > 0 {
		rms = math.Sqrt(rms / float64(len(points)))
	}
	return k, rms
}

// StreamLoad is the model load (package cost) of streaming kernels that
// moved gbs GB/s together, with a working set of ws bytes in total, on
// the resources a processor shares.
func StreamLoad(pl *hw.Platform, proc int, gbs float64, ws float64) float64 {
	l := cost.Load{DRAMBytes: gbs, WorkingSet: ws}
	var sum float64
	for _, r := range pl.Sharers()[proc] {
		sum += math.Min(1, l.Use(time.Nanosecond, &pl.Shared[r]))
	}
	return sum
}

// Corun is a subgraph's stored co-run profile.
type Corun struct {
	Key
	// ModelName is the workload's name for the model (informational).
	ModelName string
	// Alone is its back-to-back median alone, in the same measurement.
	Alone time.Duration
	// Points are the streaming kernel's; K and RMS their fit.
	Points []CorunPoint
	K, RMS float64
	// Intensity is the analytic memory intensity of the subgraph on its
	// config (cost.Intensity), which the per-configuration sensitivity
	// is fitted against.
	Intensity float64
	// Neighbours names the plan's subgraphs it was timed beside
	// ("" when none); Real is its measured slowdown beside them and
	// Predicted the model's (K with their loads).
	Neighbours      string
	Real, Predicted float64
	MeasuredAt      time.Time
}

const corunSchema = `
CREATE TABLE IF NOT EXISTS corun (
` + keyColumns + `	alone_ns INTEGER NOT NULL,
	points TEXT NOT NULL,
	k REAL NOT NULL,
	rms REAL NOT NULL,
	intensity REAL NOT NULL,
	neighbours TEXT NOT NULL,
	real_slowdown REAL NOT NULL,
	predicted_slowdown REAL NOT NULL,
	measured_at TEXT NOT NULL,
	model_name TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (device, model, layers, processor, backend, dtype, shapes)
);`

// PutCorun inserts or replaces a co-run profile. A zero MeasuredAt is now.
func (s *Store) PutCorun(c Corun) error {
	if err := c.Key.complete(s.path, "put co-run"); err != nil {
		return err
	}
	pts, err := json.Marshal(c.Points)
	if err != nil {
		return fmt.Errorf("profile: store %s: %w", s.path, err)
	}
	at := stamp(c.MeasuredAt)
	_, err = s.db.Exec(`INSERT INTO corun (device, model, layers, processor, backend, dtype, shapes,
		alone_ns, points, k, rms, intensity, neighbours, real_slowdown, predicted_slowdown, measured_at, model_name)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (device, model, layers, processor, backend, dtype, shapes) DO UPDATE SET
		alone_ns = excluded.alone_ns, points = excluded.points, k = excluded.k, rms = excluded.rms,
		intensity = excluded.intensity, neighbours = excluded.neighbours, real_slowdown = excluded.real_slowdown,
		predicted_slowdown = excluded.predicted_slowdown, measured_at = excluded.measured_at, model_name = excluded.model_name`,
		c.Device, c.Model, c.Layers, c.Processor, c.Backend, c.DType, c.Shapes,
		int64(c.Alone), string(pts), c.K, c.RMS, c.Intensity, c.Neighbours, c.Real, c.Predicted, at, c.ModelName)
	if err != nil {
		return storeError(s.path, err)
	}
	return nil
}

// Coruns returns a device's co-run profiles, ordered by key.
func (s *Store) Coruns(device string) ([]Corun, error) {
	type row struct {
		c   Corun
		pts string
	}
	rows, err := storeRows(s, func(rows *sql.Rows) (row, error) {
		var r row
		var alone int64
		var at string
		c := &r.c
		err := rows.Scan(&c.Device, &c.Model, &c.Layers, &c.Processor, &c.Backend, &c.DType, &c.Shapes,
			&alone, &r.pts, &c.K, &c.RMS, &c.Intensity, &c.Neighbours, &c.Real, &c.Predicted, &at, &c.ModelName)
		c.Alone = time.Duration(alone)
		c.MeasuredAt, _ = time.Parse(time.RFC3339Nano, at)
		return r, err
	}, `SELECT device, model, layers, processor, backend, dtype, shapes,
		alone_ns, points, k, rms, intensity, neighbours, real_slowdown, predicted_slowdown, measured_at, model_name
		FROM corun WHERE device = ? ORDER BY model, layers, processor, backend, dtype, shapes`, device)
	if err != nil {
		return nil, err
	}
	var out []Corun
	for _, r := range rows {
		c := r.c
		if err := json.Unmarshal([]byte(r.pts), &c.Points); err != nil {
			return nil, fmt.Errorf("profile: store %s: co-run %s: points: %w", s.path, c.Key, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// ConfigSensitivity fits, per processor/backend/dtype of the profiles, the
// configuration's sensitivity σ of the model (k ≈ σ · intensity) by least
// squares through the origin, clamped to [0, hw.MaxContentionSensitivity].
// The key is "processor/backend/dtype".
func ConfigSensitivity(cs []Corun) map[string]float64 {
	num, den := map[string]float64{}, map[string]float64{}
	for _, c := range cs {
		k := c.Processor + "/" + c.Backend + "/" + c.DType
		num[k] += c.K * c.Intensity
		den[k] += c.Intensity * c.Intensity
	}
	out := map[string]float64{}
	for k, d := range den {
		if d > 0 {
			out[k] = math.Min(hw.MaxContentionSensitivity, math.Max(0, num[k]/d))
		}
	}
	return out
}

// corunCond is a co-run condition with what the fit needs to know of it.
type corunCond struct {
	CorunCondition
	// duty of the streams (0: the real neighbours); streams counts them.
	duty    float64
	streams int
	// beside are the real neighbours (duty 0).
	beside []Job
}

// corunConditions lists a plan subgraph's co-run conditions, measured on
// processor proc (its twin): the streaming kernel at each of CorunDuties
// on every processor sharing a resource with proc, then the plan's
// neighbours (j.Beside), each processor looping over its subgraphs. No
// neighbour: none.
func corunConditions(pl *hw.Platform, j Job, proc string) ([]corunCond, error) {
	me, err := pl.Find(proc)
	if err != nil {
		return nil, err
	}
	sh := pl.Sharers()
	var neighbours []string
	for i, pr := range pl.Processors {
		if i != me && sharesAny(sh[i], sh[me]) {
			neighbours = append(neighbours, pr.Name)
		}
	}
	if len(neighbours) == 0 {
		return nil, nil
	}
	var out []corunCond
	for _, d := range CorunDuties {
		c := corunCond{duty: d, streams: len(neighbours)}
		for _, n := range neighbours {
			c.Loads = append(c.Loads, CorunLoad{Processor: n, StreamBytes: DefaultStreamBytes, Duty: d})
		}
		out = append(out, c)
	}
	if len(j.Beside) > 0 {
		c := corunCond{}
		names := slices.Sorted(maps.Keys(j.Beside))
		for _, n := range names {
			if n == proc {
				continue
			}
			ld := CorunLoad{Processor: n}
			for _, b := range j.Beside[n] {
				model, err := onnx.ExportSubgraph(b.LG, b.Set)
				if err != nil {
					return nil, err
				}
				ld.Models = append(ld.Models, CorunModel{Model: model, Inputs: b.Inputs})
				c.beside = append(c.beside, b)
			}
			c.Loads = append(c.Loads, ld)
		}
		if len(c.Loads) > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

func sharesAny(a, b []int) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// corunProfile fits a measured subgraph's co-run profile: the streaming
// kernel's points give k (FitSensitivity); the real neighbours' slowdown
// is kept beside the model's prediction for it from that k (a check on
// figures the fit did not see), and then joins the fit (its load from the
// analytic loads of the neighbours, time-weighted as they loop).
func corunProfile(pl *hw.Platform, a *cost.Analytic, j Job, k Key, t Timing, conds []corunCond) Corun {
	c := Corun{Key: k, ModelName: j.Model, Alone: t.Median}
	proc, _ := pl.Find(k.Processor)
	var real *CorunPoint
	for i, cond := range conds {
		ct := t.Corun[i]
		if t.Median <= 0 || ct.Median <= 0 {
			continue
		}
		slow := float64(ct.Median) / float64(t.Median)
		if cond.duty > 0 {
			ws := float64(DefaultStreamBytes) * cond.duty * float64(cond.streams)
			c.Points = append(c.Points, CorunPoint{Load: StreamLoad(pl, proc, ct.StreamGBs, ws), GBs: ct.StreamGBs, Slowdown: slow})
			continue
		}
		var bytes, wsTime float64
		var total time.Duration
		var names []string
		for _, b := range cond.beside {
			d, err := a.Subgraph(b.LG, b.Set, b.Config)
			l, lerr := a.Load(b.LG, b.Set, b.Config)
			if err != nil || lerr != nil {
				continue
			}
			bytes += l.DRAMBytes
			wsTime += l.WorkingSet * float64(d)
			total += d
			names = append(names, b.Model+"["+b.Set.Key()+"]")
		}
		if total > 0 {
			avg := cost.Load{DRAMBytes: bytes, WorkingSet: wsTime / float64(total)}
			var load float64
			for _, r := range pl.Sharers()[proc] {
				load += math.Min(1, avg.Use(total, &pl.Shared[r]))
			}
			real = &CorunPoint{Load: load, Slowdown: slow}
			c.Neighbours = strings.Join(names, " ")
			c.Real = slow
		}
	}
	c.K, c.RMS = FitSensitivity(c.Points)
	if real != nil {
		c.Predicted = cost.Slowdown(c.K, real.Load)
		c.Points = append(c.Points, *real)
		c.K, c.RMS = FitSensitivity(c.Points)
	}
	if d, err := a.Subgraph(j.LG, j.Set, j.Config); err == nil {
		if l, err := a.Load(j.LG, j.Set, j.Config); err == nil {
			c.Intensity = cost.Intensity(l.DRAMBytes, d, pl.Processors[j.Config.Proc].MemBandwidthGBs)
		}
	}
	return c
}
