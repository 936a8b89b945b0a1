package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	goruntime "runtime"
	"slices"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// Defaults of Config.
const (
	DefaultPool   = 4
	DefaultWarmup = 2
	// MinBacklog is the smallest default backlog of a group.
	MinBacklog = 4
	// MinDrain is the shortest default drain timeout.
	MinDrain = time.Second
	// DefaultArrivalSpin is the default Config.ArrivalSpin: the event
	// loop's kernel sleeps wake up to ~0.2 ms late on the test machine.
	DefaultArrivalSpin = 200 * time.Microsecond
)

// Config says what to run and how. Workload (loaded), Platform, Plan,
// Cost, Library and Duration are required.
type Config struct {
	Workload *workload.Workload
	Platform *hw.Platform
	Plan     *plan.Plan
	// Cost prices the jobs of the simulation that predicts the run (the
	// estimator the plan was made with, or the profile store's).
	Cost cost.Estimator
	// Library is the ONNX Runtime shared library's path (ort.Open).
	Library string
	// Duration is how long requests arrive.
	Duration time.Duration
	// Scale multiplies every group's nominal rate; 0 means 1.
	Scale float64
	// Seed drives the Poisson arrivals and the random input tensors.
	Seed int64
	// Policy is the dispatcher's deadline policy (default CompleteLate).
	Policy dispatch.Policy
	// Backlog bounds the requests of one group in flight: a request that
	// arrives when Backlog of its group are still in flight is dropped as
	// "overloaded". 0 means the default per group: twice the requests that
	// arrive within one deadline at the scaled rate, at least MinBacklog;
	// negative means no bound.
	Backlog int
	// DrainTimeout bounds how long requests in flight at the end of
	// Duration may still run; 0 means 4× the longest deadline, at least
	// MinDrain.
	DrainTimeout time.Duration
	// Pool is the number of random tensors kept per model input and cycled
	// through by the requests; 0 means DefaultPool.
	Pool int
	// Warmup is how many times each model runs through its subgraphs before
	// the clock starts; 0 means DefaultWarmup, negative none.
	Warmup int
	// Values fixes the values of model inputs by name; nil means
	// DefaultValues(). An input listed here must match the model's dtype
	// and shape.
	Values map[string]*graph.Data
	// Spans records what ran where (Result.Spans), for traces.
	Spans bool
	// PredictSpans keeps the prediction's spans (Result.PredictedSpans),
	// to set beside the run's per subgraph (report.CompareSpans).
	PredictSpans bool
	// NoPin leaves the workers of processors with cores unpinned and not
	// locked to threads (the OS places them). A pinned worker is locked to
	// its thread, so waking it after it slept goes through a thread
	// hand-off, and it waits whenever another process holds its core; an
	// unpinned one runs wherever a core is free, which can suit a machine
	// busy with other work.
	NoPin bool
	// ArrivalLag is added to the simulator's predicted latencies
	// (GroupResult.PredictedP50, PredictedP99): the median arrival lag
	// (Result.ArrivalLagP50) that earlier runs on this machine saw, or
	// the delay from arrival to the first subgraph's start that a hand-off
	// probe's runs saw with the loop waiting the way this run's will
	// (StartDelays, LoopSleeps), which latency counts and the simulator
	// leaves out. (The median: the lag is
	// mostly small with rare long delays, and the mean overstates what it
	// adds to a median latency.) Negative is an error.
	ArrivalLag time.Duration
	// ArrivalSpin is how long before the next arrival the event loop stops
	// sleeping and polls the clock instead. The loop sleeps in the kernel
	// with a timer slack of a nanosecond (Go's own timers wake up to a
	// millisecond late: a run on the test machine took its requests
	// 0.5–0.7 ms after their scheduled times, which latency counts); that
	// sleep still wakes ~0.1–0.2 ms late on the test machine, polling
	// within microseconds. The loop polls only when the arrival would
	// start at once (a processor of the group's first jobs has a free
	// slot); otherwise the request would wait anyway, and the worker that
	// frees the processor takes it when it is due. The price is up to
	// ArrivalSpin of CPU time per arrival, on a core the workers may need,
	// and as much on the cores of the idle workers the arrival starts on,
	// which poll their queues meanwhile (see worker). When pinned workers
	// hold every core the process may use, the polling loop delays them, and even on another core a loop that polled
	// continuously slowed a busy worker's ONNX Runtime calls on the 2-core
	// test machine by several percent. So 0 means DefaultArrivalSpin when
	// the loop has a core to itself (the workers are unpinned, or pinned
	// to fewer cores than the process may run on) and no polling
	// otherwise; negative never polls.
	ArrivalSpin time.Duration
	// Spin is how long an idle worker polls its queue before it blocks
	// (0: it blocks at once; negative is an error). A task handed to a
	// polling worker starts without a thread wake-up; the price is the
	// polling's CPU time on the worker's core after each task, which the
	// event loop and other processes may need. A worker's next task on its
	// own processor (of concurrency 1) needs no wake-up in any case (it
	// hands it to itself),
	// so polling only helps hand-offs between processors and arrivals; on
	// the shared 2-core test machine 200 µs of polling did not pay
	// (BenchmarkOverhead pinned-spin); it is for machines with cores to
	// spare.
	Spin time.Duration

	// wrap, when set, wraps every subgraph's runner (tests inject faults).
	wrap func(label string, r Runner) Runner
}

// DefaultValues are the known-value inputs: "sr", the sample rate of
// Silero VAD, is 16000 (an int64 scalar; any other value makes the model
// fail).
func DefaultValues() map[string]*graph.Data {
	return map[string]*graph.Data{
		"sr": {DType: graph.Int64, Dims: graph.Shape{}, Raw: binary.LittleEndian.AppendUint64(nil, 16000)},
	}
}

func (c Config) withDefaults() (Config, error) {
	if c.Workload == nil || c.Platform == nil || c.Plan == nil || c.Cost == nil {
		return c, errors.New("runtime: Run needs a workload, a platform, a plan and a cost estimator")
	}
	if c.Library == "" {
		return c, errors.New("runtime: no ONNX Runtime library given")
	}
	if c.Duration <= 0 {
		return c, fmt.Errorf("runtime: duration %v must be positive", c.Duration)
	}
	var err error
	if c.Scale, err = workload.RateScale(c.Scale); err != nil {
		return c, fmt.Errorf("runtime: %w", err)
	}
	if c.DrainTimeout < 0 {
		return c, fmt.Errorf("runtime: negative drain timeout %v", c.DrainTimeout)
	}
	if c.DrainTimeout == 0 {
		var longest time.Duration
		for _, g := range c.Workload.Groups {
			longest = max(longest, g.Deadline)
		}
		c.DrainTimeout = max(4*longest, MinDrain)
	}
	if c.ArrivalLag < 0 {
		return c, fmt.Errorf("runtime: negative arrival lag %v", c.ArrivalLag)
	}
	switch {
	case c.ArrivalSpin == 0 && c.loopHasCore():
		c.ArrivalSpin = DefaultArrivalSpin
	case c.ArrivalSpin <= 0:
		c.ArrivalSpin = 0
	}
	if c.Spin < 0 {
		return c, fmt.Errorf("runtime: negative spin %v", c.Spin)
	}
	if c.Pool < 0 {
		return c, fmt.Errorf("runtime: negative pool size %d", c.Pool)
	}
	if c.Pool == 0 {
		c.Pool = DefaultPool
	}
	switch {
	case c.Warmup == 0:
		c.Warmup = DefaultWarmup
	case c.Warmup < 0:
		c.Warmup = 0
	}
	if c.Values == nil {
		c.Values = DefaultValues()
	}
	return c, nil
}

// backlog is the bound on group g's requests in flight (0: none).
func (c *Config) backlog(g *workload.Group) int {
	if c.Backlog < 0 {
		return 0
	}
	if c.Backlog > 0 {
		return c.Backlog
	}
	period := float64(g.Period) / c.Scale
	n := int(math.Ceil(2 * float64(g.Deadline) / period))
	return max(n, MinBacklog)
}

// LoopSleeps reports whether the event loop of a run with c sleeps to
// every arrival in the kernel (no ArrivalSpin: it is negative, or 0 and
// the pinned workers hold every core the process may use) rather than
// polling the clock for the last stretch before it. The two ways take an
// arrival late by different amounts (StartDelays); which one a run takes
// decides which of a probe's delays its prediction adds.
func (c *Config) LoopSleeps() bool {
	return c.ArrivalSpin < 0 || (c.ArrivalSpin == 0 && !c.loopHasCore())
}

// loopHasCore reports whether the event loop has a core that no pinned
// worker holds: the workers are unpinned, or their cores are fewer than
// the CPUs the process may run on.
func (c *Config) loopHasCore() bool {
	held, unpinned := c.workerCores()
	return c.NoPin || unpinned || len(held) < goruntime.NumCPU()
}

// workerCores lists, ascending and once each, the cores held by the pinned
// workers of the processors the plan uses (none with NoPin); unpinned
// reports whether one of those processors has no cores, so that its
// worker runs wherever the OS puts it.
func (c *Config) workerCores() (held []int, unpinned bool) {
	if c.NoPin {
		return nil, false
	}
	for _, mp := range c.Plan.Models {
		for _, sg := range mp.Subgraphs {
			i, err := c.Platform.Find(sg.Processor)
			if err != nil {
				continue
			}
			cores := c.Platform.Processors[i].Cores
			unpinned = unpinned || len(cores) == 0
			held = append(held, cores...)
		}
	}
	slices.Sort(held)
	return slices.Compact(held), unpinned
}
