package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// CostModel is the cost model of a command that plans or simulates on pl:
// the analytic model, calibrated with the factors Calibrate fitted for the
// platform's device (DeviceFor), answering from the device's measurements
// first (Estimator), when the store at path has any; else the plain
// analytic model. path "" means no store. A missing store is fine unless
// named (named: the user gave the path, so its absence is an error).
//
// note reports, once the estimator has been used, how many subgraphs fell
// back to the model ("" when no store was used). w (may be nil) only
// feeds the note: its models that the store holds no measurement of are
// named.
func CostModel(path string, named bool, pl *hw.Platform, w *workload.Workload) (est cost.Estimator, note func() string, err error) {
	analytic := cost.NewAnalytic(pl)
	none := func() string { return "" }
	if path == "" {
		return analytic, none, nil
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) && !named {
			return analytic, none, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("--profiles %s: no such file (inlay profile creates it)", path)
		}
		return nil, nil, fmt.Errorf("--profiles: %w", err)
	}
	st, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	device, err := DeviceFor(st, pl)
	if err != nil {
		return nil, nil, err
	}
	if device == "" {
		if !named {
			return analytic, none, nil
		}
		msg := fmt.Sprintf("profiles: %s holds no measurements for platform %s; using the analytic model", path, pl.Name)
		return analytic, func() string { return msg }, nil
	}
	base, calibrated, err := CalibratedModel(st, device, pl)
	if err != nil {
		return nil, nil, err
	}
	pe := NewEstimator(st, device, base)
	if err := pe.Err(); err != nil {
		return nil, nil, err
	}
	model := "analytic"
	if calibrated {
		model = "calibrated"
	}
	unmeasured := unmeasuredModels(pe, w)
	note = func() string {
		s := fmt.Sprintf("profiles: %d measurement(s) of %s from %s; %d subgraph(s) answered from them, %d had no measurement and fell back to the %s model",
			pe.Len(), device, path, pe.Hits(), pe.Misses(), model)
		if n := pe.Cold(); n > 0 {
			s += fmt.Sprintf("; %d with cold-cache figures", n)
		}
		if n := pe.Cycled(); n > 0 {
			s += fmt.Sprintf(", %d answered with their plan-cycle figures", n)
		}
		for _, w := range pe.WakeUps() {
			s += fmt.Sprintf("; wake-up %v on %s at a model's start (median of %d idle measurements)", w.Wake.Round(time.Microsecond), w.Processor, w.Samples)
		}
		if h, ok := pe.HandOffs(); ok {
			mode := "pinned"
			if !h.Pinned {
				mode = "unpinned"
			}
			s += fmt.Sprintf("; hand-off %v on one processor, %v between two (%s)", h.Same.Round(time.Microsecond), h.Cross.Round(time.Microsecond), mode)
		}
		if n := pe.InSitu(); n > 0 {
			s += fmt.Sprintf("; %d in-situ measurement(s) (inlay run --record) stand in for the profiler's", n)
		}
		if len(unmeasured) > 0 {
			s += fmt.Sprintf(" (never profiled or changed since: %s)", strings.Join(unmeasured, ", "))
		}
		return s
	}
	return pe, note, nil
}

// DeviceFor picks the store's device for a platform: this machine
// (LocalDeviceName) for host, when it has figures there, else the device
// most recently profiled as that platform; "" when there is none.
func DeviceFor(st *Store, pl *hw.Platform) (string, error) {
	if pl.Name == "host" {
		devs, err := st.Devices()
		if err != nil {
			return "", err
		}
		local := LocalDeviceName()
		for _, d := range devs {
			if d.Name == local && d.Platform == pl.Name && d.Measurements+d.InSitu > 0 {
				return local, nil
			}
		}
	}
	name, ok, err := st.DeviceFor(pl.Name)
	if err != nil || !ok {
		return "", err
	}
	return name, nil
}

// CalibratedModel is the analytic model with the device's fitted factors
// where the store has them; calibrated reports whether any processor had.
func CalibratedModel(st *Store, device string, pl *hw.Platform) (a *cost.Analytic, calibrated bool, err error) {
	cals, err := st.Calibrations(device)
	if err != nil {
		return nil, false, err
	}
	byProc := map[int]cost.Efficiency{}
	for i, pr := range pl.Processors {
		if c, ok := cals[pr.Name]; ok && c.Efficiency.Validate() == nil {
			byProc[i] = c.Efficiency
			calibrated = true
		}
	}
	a, err = cost.NewPartlyCalibrated(pl, byProc)
	return a, calibrated, err
}

// unmeasuredModels names the workload's models none of whose layers the
// estimator's device measured on any processor.
func unmeasuredModels(pe *Estimator, w *workload.Workload) []string {
	if w == nil {
		return nil
	}
	var out []string
	for _, m := range w.Models {
		if m.Graph != nil && !pe.HasModel(ModelID(m.Graph)) {
			out = append(out, m.Name)
		}
	}
	return out
}

// Observed is one subgraph's in-situ timing from a real run of a plan:
// the model, the subgraph's position in the model's plan, its label (for
// errors) and the service time of each run.
type Observed struct {
	Model   string
	Index   int
	Label   string
	Service []time.Duration
}

// RecordInSitu stores each observed subgraph's in-situ timing in st as
// device's (on platform pl, ONNX Runtime ortVersion), merged with what
// earlier runs recorded, and the run's median arrival lag over requests
// requests (none when requests is 0). Subgraphs without runs, of models
// without layers, or past the plan's list are skipped. It returns how
// many subgraphs it recorded.
func RecordInSitu(st *Store, device, ortVersion string, pl *hw.Platform, w *workload.Workload, p *plan.Plan, obs []Observed, lag time.Duration, requests int) (int, error) {
	if err := st.PutDevice(device, pl.Name, ortVersion); err != nil {
		return 0, err
	}
	subs := map[string][]plan.Subgraph{}
	for _, mp := range p.Models {
		subs[mp.Model] = mp.Subgraphs
	}
	n := 0
	for _, o := range obs {
		m := w.Model(o.Model)
		if len(o.Service) == 0 || m == nil || m.Layers == nil || o.Index >= len(subs[o.Model]) {
			continue
		}
		sg := subs[o.Model][o.Index]
		cfg, err := sg.Config(pl)
		if err != nil {
			return n, fmt.Errorf("--record: %s: %w", o.Label, err)
		}
		k, err := SubgraphKey(device, pl, m.Layers, sg.Layers, cfg)
		if err != nil {
			return n, fmt.Errorf("--record: %s: %w", o.Label, err)
		}
		if err := st.MergeInSitu(NewInSitu(k, o.Model, o.Service, ortVersion)); err != nil {
			return n, err
		}
		n++
	}
	if requests > 0 {
		if err := st.AddArrivalLag(device, lag, requests); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Recorded is what runs and profiles recorded for one device in a store,
// beside its figures: what inlay run and agent run read before they run.
type Recorded struct {
	// ArrivalLag is the median arrival lag runs recorded (RecordInSitu):
	// what the simulator's predictions leave out on that device; 0 when
	// none.
	ArrivalLag time.Duration
	// Speeds is the speed the device's last profile took its figures at,
	// by core (Store.Speeds); none when it has none.
	Speeds []CoreSpeed
	// HandOffs are the device's measured hand-offs (Store.HandOffs), with
	// the delays to a request's first subgraph their probe saw.
	HandOffs []HandOff
}

// StartDelay is what a run's prediction adds to its requests' latencies
// (runtime.Config.ArrivalLag) for a run pinned or not whose event loop
// sleeps to its arrivals or not (runtime.Config.LoopSleeps), and a phrase
// saying what it is: the arrival lag recorded runs saw, if any (their
// in-situ figures hold the rest of a request's start: the hand-off to its
// first worker), else the delay from arrival to the first subgraph's start
// that the profile's hand-off probe measured with the run's pinning and
// way of waiting; 0 and "" when neither was measured.
func (r Recorded) StartDelay(pinned, sleeps bool) (time.Duration, string) {
	if r.ArrivalLag > 0 {
		return r.ArrivalLag, fmt.Sprintf("the arrival lag of %v that recorded runs saw", r.ArrivalLag.Round(time.Microsecond))
	}
	for _, h := range r.HandOffs {
		if h.Pinned != pinned {
			continue
		}
		way, d, n := "polling for", h.PollStart, h.PollRequests
		if sleeps {
			way, d, n = "sleeping to", h.SleepStart, h.SleepRequests
		}
		if n > 0 {
			return d, fmt.Sprintf("%v from arrival to the first subgraph, as the profile's hand-off probe measured it with the event loop %s its arrivals", d.Round(time.Microsecond), way)
		}
	}
	return 0, ""
}

// ReadRecorded reads what the store at path recorded for device, opening
// it once. The zero Recorded and no error when path is "" or the store
// does not exist (CostModel says what is wrong with the path).
func ReadRecorded(path, device string) (Recorded, error) {
	if path == "" {
		return Recorded{}, nil
	}
	if _, err := os.Stat(path); err != nil {
		return Recorded{}, nil
	}
	st, err := Open(path)
	if err != nil {
		return Recorded{}, err
	}
	defer st.Close()
	a, _, err := st.ArrivalLag(device)
	if err != nil {
		return Recorded{}, err
	}
	sp, err := st.Speeds(device)
	if err != nil {
		return Recorded{}, err
	}
	hos, err := st.HandOffs(device)
	if err != nil {
		return Recorded{}, err
	}
	return Recorded{ArrivalLag: a.Lag, Speeds: sp, HandOffs: hos}, nil
}
