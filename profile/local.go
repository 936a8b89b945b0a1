package profile

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"github.com/inlay-dev/inlay/ort"
)

// LocalBackend is the one backend Local measures with: ONNX Runtime's CPU
// execution provider.
const LocalBackend = "ort-cpu"

// Local measures on this machine with ONNX Runtime's CPU build. A
// measurement runs on a goroutine locked to a fresh OS thread that is pinned
// to the processor's cores (when it lists Cores), with as many intra-op
// threads as it has cores (ONNX Runtime's thread pool inherits the pinning)
// and one inter-op thread. Measurements run one at a time, so that they do
// not disturb each other. Before each cold run (MeasureRequest.Cold) the
// measuring thread writes a buffer of twice the cores' largest cache
// (CacheBytes), which evicts the model's weights, code and activations;
// before each idle run (MeasureRequest.Idle) it does the same, then sleeps
// for IdleGap.
type Local struct {
	rt   *ort.Runtime
	pl   *hw.Platform
	name string
	mu   sync.Mutex // one measurement at a time; guards evict
	// evict is the buffer written to evict the caches before a cold run.
	evict []byte
	// speed keeps each phase of a measurement out of the host's slow
	// spells (see SlowRatio).
	speed *speedGuard
}

var _ Device = (*Local)(nil)

// IdleGap is how long Local's measuring thread sleeps before each idle run
// (MeasureRequest.Idle), after evicting the caches: long enough for the
// processor to idle as it does between a periodic workload's requests. On
// the 2-core host (a KVM guest), the first run after waking from a sleep
// of 10 ms or more was up to about 0.7 ms slower than a run right after
// the eviction on a core kept busy: speech_embed
// (embedding_model.onnx) 2.3 ms busy, 2.9 ms after 10 ms idle and 3.0 ms
// after 20-160 ms; ocr_det at 320x320 28.0 against 28.7 ms; the runs after
// the first were back at the busy core's figures (docs/results/contention-log.md,
// "Waking an idle processor").
const IdleGap = 20 * time.Millisecond

// LocalDeviceName is the name Local gives this machine in the store: its
// host name ("localhost" when it has none).
func LocalDeviceName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// NewLocal loads ONNX Runtime from libPath (see ort.Open) and returns the
// local device for platform pl (normally hw.Preset("host")).
func NewLocal(libPath string, pl *hw.Platform) (*Local, error) {
	if pl == nil || len(pl.Processors) == 0 {
		return nil, errors.New("profile: local device: no platform")
	}
	rt, err := ort.Open(libPath)
	if err != nil {
		return nil, fmt.Errorf("profile: local device: %w", err)
	}
	return &Local{rt: rt, pl: pl, name: LocalDeviceName(), speed: newSpeedGuard()}, nil
}

// Speed returns what the speed guard did so far: how often it waited for
// a core at its normal speed, re-timed a phase, or accepted one timed in a
// slow spell (see SlowRatio).
func (l *Local) Speed() SpeedStats { return l.speed.Stats() }

// Info names the machine, the ONNX Runtime version and the platform.
func (l *Local) Info(ctx context.Context) (DeviceInfo, error) {
	return DeviceInfo{Name: l.name, ORTVersion: l.rt.Version(), Platform: l.pl}, nil
}

// Measure times the request's model on its processor. A model ONNX Runtime
// rejects or fails to run is an error naming the processor.
func (l *Local) Measure(ctx context.Context, req MeasureRequest) (Timing, error) {
	return l.measureOn(ctx, req, true)
}

// MeasureNow is Measure without the speed guard: it times the model at the
// processor's speed now, slow spell or not (ProbePlan).
func (l *Local) MeasureNow(ctx context.Context, req MeasureRequest) (Timing, error) {
	return l.measureOn(ctx, req, false)
}

func (l *Local) measureOn(ctx context.Context, req MeasureRequest, guard bool) (Timing, error) {
	if err := req.Validate(); err != nil {
		return Timing{}, err
	}
	proc, err := l.pl.Find(req.Processor)
	if err != nil {
		return Timing{}, fmt.Errorf("profile: measure: %w", err)
	}
	pr := l.pl.Processors[proc]
	if err := localConfig(req.Backend, req.DType); err != nil {
		return Timing{}, fmt.Errorf("profile: measure on %s: %w", pr.Name, err)
	}
	outputs, err := graphOutputs(req.Model)
	if err != nil {
		return Timing{}, fmt.Errorf("profile: measure on %s: %w", pr.Name, err)
	}
	rng := rand.New(rand.NewSource(1))
	names := make([]string, len(req.Inputs))
	data := make([]*graph.Data, len(req.Inputs))
	for i, in := range req.Inputs {
		names[i] = in.Name
		data[i] = ort.RandomData(in.DType, in.Shape, rng)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	type result struct {
		t   Timing
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Pinned for the measurement, its affinity restored after (or the
		// thread ends with the goroutine): the pinning never leaks.
		release, err := pinThread(pr.Cores)
		if err != nil {
			done <- result{err: fmt.Errorf("profile: measure on %s: pin to cores %v: %w", pr.Name, pr.Cores, err)}
			return
		}
		defer release()
		t, err := l.measure(ctx, req, pr, names, outputs, data, guard)
		done <- result{t, err}
	}()
	r := <-done
	return r.t, r.err
}

func (l *Local) measure(ctx context.Context, req MeasureRequest, pr *hw.Processor, names, outputs []string, data []*graph.Data, guard bool) (Timing, error) {
	threads := len(pr.Cores)
	if threads == 0 {
		threads = 1
	}
	sess, err := l.rt.NewSession(req.Model, names, outputs, ort.SessionOptions{IntraOpThreads: threads, InterOpThreads: 1})
	if err != nil {
		return Timing{}, fmt.Errorf("profile: measure on %s: %w", pr.Name, err)
	}
	defer sess.Close()
	// Each phase runs at the core's normal speed as far as the speed
	// guard can tell (see SlowRatio); the reference kernel runs on this
	// thread, pinned as the measurement is.
	core := -1
	if len(pr.Cores) > 0 {
		core = pr.Cores[0]
	}
	phase := func(run func() error) error {
		if !guard {
			return run()
		}
		return l.speed.phase(ctx, core, run)
	}
	var t Timing
	err = phase(func() error {
		for i := 0; i < req.Warmup; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if _, err := sess.Run(data); err != nil {
				return fmt.Errorf("profile: measure on %s: %w", pr.Name, err)
			}
		}
		samples, err := timeRuns(ctx, sess, data, req.Reps, nil)
		if err != nil {
			return fmt.Errorf("profile: measure on %s: %w", pr.Name, err)
		}
		t = Summarize(samples)
		return nil
	})
	if err != nil {
		return Timing{}, err
	}
	if req.Cold > 0 {
		if err := phase(func() (err error) {
			t.Cold, t.ColdReps, err = l.timeEvicted(ctx, sess, data, pr, req.Cold, 0)
			return err
		}); err != nil {
			return Timing{}, err
		}
	}
	if req.Idle > 0 {
		if err := phase(func() (err error) {
			t.Idle, t.IdleReps, err = l.timeEvicted(ctx, sess, data, pr, req.Idle, IdleGap)
			return err
		}); err != nil {
			return Timing{}, err
		}
	}
	for _, cond := range req.Corun {
		var ct CorunTiming
		if err := phase(func() (err error) {
			ct, err = l.corun(ctx, cond, func() ([]time.Duration, error) { return timeRuns(ctx, sess, data, req.Reps, nil) })
			return err
		}); err != nil {
			return Timing{}, fmt.Errorf("profile: measure on %s: co-run: %w", pr.Name, err)
		}
		t.Corun = append(t.Corun, ct)
	}
	return t, nil
}

// timeEvicted times n runs of the session, each after evicting pr's caches
// and then sleeping for idle (none when 0), and returns their median and
// count.
func (l *Local) timeEvicted(ctx context.Context, sess *ort.Session, data []*graph.Data, pr *hw.Processor, n int, idle time.Duration) (time.Duration, int, error) {
	evict := l.evictBuffer(pr)
	runs, err := timeRuns(ctx, sess, data, n, func() {
		touch(evict)
		if idle > 0 {
			time.Sleep(idle)
		}
	})
	if err != nil {
		return 0, 0, fmt.Errorf("profile: measure on %s: %w", pr.Name, err)
	}
	s := Summarize(runs)
	return s.Median, s.Reps, nil
}

// timeRuns times n runs of the session, calling before (when not nil)
// untimed ahead of each; it stops when ctx ends.
func timeRuns(ctx context.Context, sess *ort.Session, data []*graph.Data, n int, before func()) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if before != nil {
			before()
		}
		start := time.Now()
		_, err := sess.Run(data)
		d := time.Since(start)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// evictBuffer is the buffer whose writing evicts the caches of the
// processor's cores: twice their largest cache (CacheBytes), allocated once.
func (l *Local) evictBuffer(pr *hw.Processor) []byte {
	core := 0
	if len(pr.Cores) > 0 {
		core = pr.Cores[0]
	}
	n := 2 * CacheBytes(core)
	if len(l.evict) < n {
		l.evict = make([]byte, n)
	}
	return l.evict[:n]
}

// touch writes one byte of every 64-byte line of b, which pushes what the
// caches held out to memory.
func touch(b []byte) {
	for i := 0; i < len(b); i += 64 {
		b[i]++
	}
}

// localConfig checks a request's backend and data type against what Local
// measures with (empty: the default).
func localConfig(backend, dtype string) error {
	if backend != "" && backend != LocalBackend {
		return fmt.Errorf("backend %q: this machine measures with %s only", backend, LocalBackend)
	}
	if dtype != "" && dtype != graph.Float32.String() {
		return fmt.Errorf("data type %q: this machine measures models in their own types (float32) only", dtype)
	}
	return nil
}

// graphOutputs returns the names of a model's graph outputs.
func graphOutputs(model []byte) ([]string, error) {
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(model, &mp); err != nil {
		return nil, fmt.Errorf("decode model: %w", err)
	}
	var out []string
	for _, vi := range mp.GetGraph().GetOutput() {
		out = append(out, vi.GetName())
	}
	if len(out) == 0 {
		return nil, errors.New("the model has no outputs")
	}
	return out, nil
}
