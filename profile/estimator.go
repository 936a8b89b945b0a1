package profile

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/stats"
)

// Twins maps each processor to the first processor (lowest ID) that is
// identical to it but for its name, description and which cores it is
// pinned to (the number of cores must match): the processor whose
// measurements stand for it. On the host platform every core maps to the
// first core.
func Twins(pl *hw.Platform) []int {
	out := make([]int, len(pl.Processors))
	for i, pr := range pl.Processors {
		out[i] = i
		for j := 0; j < i; j++ {
			if out[j] == j && sameClass(pl.Processors[j], pr) {
				out[i] = j
				break
			}
		}
	}
	return out
}

func sameClass(a, b *hw.Processor) bool {
	x, y := *a, *b
	if len(x.Cores) != len(y.Cores) {
		return false
	}
	x.Name, y.Name, x.Description, y.Description, x.Cores, y.Cores = "", "", "", "", nil, nil
	return reflect.DeepEqual(x, y)
}

// Estimator answers from measured figures first (see the package doc). It
// is safe for concurrent use.
type Estimator struct {
	base    cost.Estimator
	device  string
	pl      *hw.Platform
	twins   []int
	figures map[Key]time.Duration
	models  map[string]bool
	insitu  int
	cold    int
	cycled  int
	// coldFit corrects fallback figures, per processor, when the
	// measured ones are cold (see NewEstimator).
	coldFit []ColdFit
	err     error

	mu     sync.Mutex
	missed map[Key]bool
	hit    map[Key]bool

	// corunK are the measured subgraphs' fitted sensitivities (co-run
	// profiles); configK the per-configuration fits, by
	// "processor/backend/dtype".
	corunK  map[Key]float64
	configK map[string]float64

	// handOffs are the device's measured hand-offs, by pinning; unpinned
	// selects which one HandOff answers with (UseUnpinned). situ holds the
	// keys answered from in-situ figures, which include the hand-off.
	handOffs map[bool]HandOff
	unpinned bool
	situ     map[Key]bool
	// wake is, per processor configuration (processor class, backend,
	// dtype), the median over its measurements with idle runs of what they
	// took after idling above their cold figure (Timing.Idle − Timing.Cold),
	// when that median is positive; wakes lists them for reports.
	wake  map[wakeClass]time.Duration
	wakes []WakeUp

	// byClass indexes figures for LayerLowerBound; lbs caches its tables.
	byClass map[figureClass][]measuredFigure
	lbMu    sync.Mutex
	lbs     map[lbKey]*lbTable
}

var (
	_ cost.ContentionEstimator   = (*Estimator)(nil)
	_ cost.HandOffEstimator      = (*Estimator)(nil)
	_ cost.CrossHandOffEstimator = (*Estimator)(nil)
)

// NewEstimator reads the device's measurements from the store and returns
// an estimator that answers from them where one matches exactly, else from
// base. base must know its platform (a Platform() *hw.Platform method, as
// *cost.Analytic has) to name processors; when it does not, or the store
// cannot be read, every query falls back to base and Err says why.
// Measurements that recorded an error are not used. A measurement with
// cold runs (Timing.Cold) answers with their median, not the back-to-back
// one: in a plan, a subgraph mostly runs after other work on its
// processor, and so with its weights out of the caches; the fallback
// figures are then scaled likewise by the calibration's cold correction
// for the processor (ColdFit; none when the store has no calibration with
// one), so that measured and unmeasured subgraphs compare fairly. A
// measurement with a cycle figure (Timing.Cycle: timed inside its plan's
// cycle) answers with that, before the cold one: it is what the subgraph
// takes in a steady run of the plan it was timed in, the caches holding
// what the plan's other subgraphs left there. An in-situ
// measurement's Typical figure (InSitu: the subgraph's time inside a real
// run, the runtime's delays included) replaces the profiler's median for
// its key: it is what the runtime will see again.
func NewEstimator(st *Store, device string, base cost.Estimator) *Estimator {
	e := &Estimator{base: base, device: device, figures: map[Key]time.Duration{}, models: map[string]bool{}, missed: map[Key]bool{}, hit: map[Key]bool{}}
	pb, ok := base.(interface{ Platform() *hw.Platform })
	if !ok || pb.Platform() == nil {
		e.err = fmt.Errorf("profile: estimator: the base estimator (%T) does not name its platform", base)
		return e
	}
	e.pl = pb.Platform()
	e.twins = Twins(e.pl)
	if st == nil {
		return e
	}
	recs, err := st.Records(device)
	if err != nil {
		e.err = err
		return e
	}
	idle := map[wakeClass][]time.Duration{}
	for _, r := range recs {
		if r.Error == "" && r.Reps > 0 {
			e.figures[r.Key] = r.Median
			if r.ColdReps > 0 && r.Cold > 0 {
				e.figures[r.Key] = r.Cold
				e.cold++
				if r.IdleReps > 0 && r.Idle > 0 {
					c := wakeClass{r.Processor, r.Backend, r.DType}
					idle[c] = append(idle[c], r.Idle-r.Cold)
				}
			}
			if r.CycleReps > 0 && r.Cycle > 0 {
				e.figures[r.Key] = r.Cycle
				e.cycled++
			}
			e.models[r.Model] = true
		}
	}
	e.poolWakes(idle)
	if e.cold > 0 {
		cals, err := st.Calibrations(device)
		if err != nil {
			e.err = err
			return e
		}
		e.coldFit = make([]ColdFit, len(e.pl.Processors))
		for i, pr := range e.pl.Processors {
			e.coldFit[i] = cals[pr.Name].Cold
		}
	}
	coruns, err := st.Coruns(device)
	if err != nil {
		e.err = err
		return e
	}
	if len(coruns) > 0 {
		e.corunK = map[Key]float64{}
		for _, c := range coruns {
			e.corunK[c.Key] = c.K
		}
		e.configK = ConfigSensitivity(coruns)
	}
	situ, err := st.InSituRecords(device)
	if err != nil {
		e.err = err
		return e
	}
	for _, r := range situ {
		if r.Reps > 0 && r.Typical > 0 {
			e.figures[r.Key] = r.Typical
			e.models[r.Model] = true
			e.insitu++
			if e.situ == nil {
				e.situ = map[Key]bool{}
			}
			e.situ[r.Key] = true
		}
	}
	hos, err := st.HandOffs(device)
	if err != nil {
		e.err = err
		return e
	}
	for _, h := range hos {
		if e.handOffs == nil {
			e.handOffs = map[bool]HandOff{}
		}
		e.handOffs[h.Pinned] = h
	}
	e.byClass = map[figureClass][]measuredFigure{}
	for k, d := range e.figures {
		c := figureClass{k.Model, k.Processor, k.Backend, k.DType}
		e.byClass[c] = append(e.byClass[c], measuredFigure{k, d})
	}
	return e
}

// Cold is the number of measurements with a cold figure (each answers
// with it, unless it has a cycle figure too).
func (e *Estimator) Cold() int { return e.cold }

// Cycled is the number of measurements it answers with their cycle figure
// (Timing.Cycle).
func (e *Estimator) Cycled() int { return e.cycled }

// WakeUp is what HandOff charges a model's first subgraph on one
// processor configuration: the median, over the Samples measurements with
// idle runs there, of Timing.Idle − Timing.Cold.
type WakeUp struct {
	Processor, Backend, DType string
	Wake                      time.Duration
	Samples                   int
}

type wakeClass struct{ proc, backend, dtype string }

// poolWakes sets the wake-up of each configuration from its measurements'
// differences: their median, so that the noise of two short medians
// neither adds up nor is clipped one way (a difference below zero counts
// as it is); none where it is not positive. Pooled rather than per
// subgraph, so that a plan whose first subgraph was measured and one whose
// first subgraph was not are charged alike (as the cold correction keeps
// measured and unmeasured figures comparable).
func (e *Estimator) poolWakes(idle map[wakeClass][]time.Duration) {
	classes := slices.SortedFunc(maps.Keys(idle), func(a, b wakeClass) int {
		return cmp.Or(cmp.Compare(a.proc, b.proc), cmp.Compare(a.backend, b.backend), cmp.Compare(a.dtype, b.dtype))
	})
	for _, c := range classes {
		d := stats.Median(idle[c])
		if d <= 0 {
			continue
		}
		if e.wake == nil {
			e.wake = map[wakeClass]time.Duration{}
		}
		e.wake[c] = d
		e.wakes = append(e.wakes, WakeUp{Processor: c.proc, Backend: c.backend, DType: c.dtype, Wake: d, Samples: len(idle[c])})
	}
}

// WakeUps lists the wake-ups HandOff charges, by processor configuration.
func (e *Estimator) WakeUps() []WakeUp { return e.wakes }

// InSitu is the number of in-situ measurements it holds (each replaces or
// adds to the profiler's figure for its key).
func (e *Estimator) InSitu() int { return e.insitu }

// Err says why the estimator could not read measurements (nil when it could).
func (e *Estimator) Err() error { return e.err }

// Len is the number of usable measurements it holds.
func (e *Estimator) Len() int { return len(e.figures) }

// HasModel reports whether it holds any measurement of the model (by
// ModelID).
func (e *Estimator) HasModel(id string) bool { return e.models[id] }

// Device is the device whose measurements it reads.
func (e *Estimator) Device() string { return e.device }

// Platform is the base estimator's platform (nil when it names none).
func (e *Estimator) Platform() *hw.Platform { return e.pl }

// Transfer is the base estimator's.
func (e *Estimator) Transfer(bytes int64, from, to int) time.Duration {
	return e.base.Transfer(bytes, from, to)
}

// Key returns the store key that a subgraph on a config looks up: the
// config's processor is replaced by its twin (see Twins).
func (e *Estimator) Key(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (Key, error) {
	if e.pl == nil {
		return Key{}, fmt.Errorf("profile: processor %d is not on the platform", on.Proc)
	}
	return subgraphKey(e.device, e.pl, e.twins, lg, set, on)
}

// SubgraphKey is the store key of a subgraph on a config of platform pl,
// measured on device: the key an Estimator looks up (the config's
// processor replaced by its twin, see Twins).
func SubgraphKey(device string, pl *hw.Platform, lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (Key, error) {
	return subgraphKey(device, pl, Twins(pl), lg, set, on)
}

func subgraphKey(device string, pl *hw.Platform, twins []int, lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (Key, error) {
	if on.Proc < 0 || on.Proc >= len(pl.Processors) {
		return Key{}, fmt.Errorf("profile: processor %d is not on the platform", on.Proc)
	}
	ins, err := SubgraphInputs(lg, set)
	if err != nil {
		return Key{}, err
	}
	return Key{Device: device, Model: ModelID(lg.Model), Layers: set.Key(),
		Processor: pl.Processors[twins[on.Proc]].Name, Backend: on.Backend, DType: on.DType.String(),
		Shapes: ShapesKey(ins)}, nil
}

// UseUnpinned makes HandOff answer with the hand-off measured with the
// runtime's workers unpinned (inlay run --no-pin) instead of pinned (the
// default). Call it before the estimator is shared.
func (e *Estimator) UseUnpinned(unpinned bool) { e.unpinned = unpinned }

// HandOffs returns the measured hand-off HandOff answers with, and whether
// the store has one.
func (e *Estimator) HandOffs() (HandOff, bool) {
	h, ok := e.handOffs[!e.unpinned]
	return h, ok
}

// HandOff is the device's measured hand-off before set (the same
// processor's figure when from is on.Proc, else the cross one), for the
// pinning chosen (UseUnpinned); 0 when the store has none. When set starts
// its model on its request's arrival (from -1), it is the wake-up of set's
// processor configuration (WakeUps: the median of Timing.Idle −
// Timing.Cold over the measurements with idle runs there): its processor
// has then mostly idled since the last request, and waking it costs the
// first run that much. Not after a hand-off from another processor: in a
// chain that moves between processors, each has idled only while the
// other ran (on the held-out face plan, charging it there too
// over-predicted the camera group by 6 % more). Nothing for a set answered
// from an in-situ figure, which includes both.
func (e *Estimator) HandOff(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config, from int) time.Duration {
	var d time.Duration
	if h, ok := e.handOffs[!e.unpinned]; ok && from == on.Proc {
		d = h.Same
	} else if ok && from >= 0 {
		d = h.Cross
	}
	wake := from < 0 && len(e.wake) > 0
	if !wake && (d == 0 || len(e.situ) == 0) {
		return d // no wake-up, and no in-situ figure that could cancel d
	}
	k, err := e.Key(lg, set, on)
	switch {
	case err != nil:
		return d
	case e.situ[k]:
		return 0
	case wake:
		d += e.wake[wakeClass{k.Processor, k.Backend, k.DType}]
	}
	return d
}

// CrossAfter is the measured hand-off between processors after a
// subgraph that ran for ran, from the curve of the pinning chosen
// (UseUnpinned; HandOff.CrossAfter); ok is false when the store has no
// curve, and HandOff's flat Cross serves.
func (e *Estimator) CrossAfter(ran time.Duration) (time.Duration, bool) {
	return e.handOffs[!e.unpinned].CrossAfter.At(ran)
}

// Subgraph returns the measured median for the set on the config when the
// store has it, else the base's figure (counted as a miss). Feasibility is
// the base's: a node the processor cannot run stays an error.
func (e *Estimator) Subgraph(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (time.Duration, error) {
	base, err := e.base.Subgraph(lg, set, on)
	if err != nil || len(set) == 0 {
		return base, err
	}
	k, kerr := e.Key(lg, set, on)
	if kerr != nil {
		k = Key{Device: e.device, Model: ModelID(lg.Model), Layers: set.Key(), Backend: on.Backend, DType: on.DType.String()}
	}
	d, ok := e.figures[k]
	e.mu.Lock()
	if ok {
		e.hit[k] = true
	} else {
		e.missed[k] = true
	}
	e.mu.Unlock()
	if ok {
		return d, nil
	}
	if e.coldFit != nil && on.Proc >= 0 && on.Proc < len(e.coldFit) {
		return e.coldFit[on.Proc].Apply(base), nil
	}
	return base, nil
}

// Misses counts the distinct subgraphs (layer set, processor class,
// backend, dtype, shapes) asked for that had no measurement.
func (e *Estimator) Misses() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.missed)
}

// Hits counts the distinct subgraphs answered from measurements.
func (e *Estimator) Hits() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.hit)
}

// Coruns is the number of co-run profiles it answers Load from.
func (e *Estimator) Coruns() int { return len(e.corunK) }

// Load is the base's load (a cost.ContentionEstimator's; zero when the
// base is not one) with the sensitivity measured by inlay profile --corun:
// the subgraph's own fitted k when it was profiled, else its
// configuration's fitted sensitivity times its memory intensity, else the
// base's.
func (e *Estimator) Load(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (cost.Load, error) {
	ce, ok := e.base.(cost.ContentionEstimator)
	if !ok {
		return cost.Load{}, nil
	}
	l, err := ce.Load(lg, set, on)
	if err != nil || e.corunK == nil || e.pl == nil {
		return l, err
	}
	k, kerr := e.Key(lg, set, on)
	if kerr != nil {
		return l, nil
	}
	if measured, ok := e.corunK[k]; ok {
		l.Sensitivity = measured
		return l, nil
	}
	if sigma, ok := e.configK[k.Processor+"/"+k.Backend+"/"+k.DType]; ok {
		if ps := e.pl.Processors[on.Proc].ContentionSensitivity; ps > 0 {
			l.Sensitivity = sigma * l.Sensitivity / ps
		}
	}
	return l, nil
}
