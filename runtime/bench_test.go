package runtime

import (
	"context"
	"flag"
	goruntime "runtime"
	"slices"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/stats"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/workload/workloadtest"
)

// Workloads of one group each for BenchmarkOverhead.
var overheadWorkloads = []struct{ name, text string }{
	{"voice", `models:
  - {name: vad, onnx: cache:silero_vad_legacy.onnx, inputs: {input: [1, 512], h: [2, 1, 64], c: [2, 1, 64]}}
  - {name: melspec, onnx: cache:melspectrogram.onnx, inputs: {input: [1, 1280]}}
  - {name: speech_embed, onnx: cache:embedding_model.onnx, inputs: {input_1: [1, 76, 32, 1]}}
  - {name: wakeword, onnx: cache:hey_jarvis_v0.1.onnx}
groups:
  - name: voice
    models: [vad, melspec, speech_embed, wakeword]
    after: {speech_embed: [melspec], wakeword: [speech_embed]}
    period_ms: 80
`},
	{"ocr", `models:
  - {name: ocr_det, onnx: cache:ch_PP-OCRv4_det_infer.onnx, inputs: {x: [1, 3, 320, 320]}}
  - {name: ocr_cls, onnx: cache:ch_ppocr_mobile_v2.0_cls_infer.onnx, inputs: {x: [1, 3, 48, 192]}}
  - {name: ocr_rec, onnx: cache:ch_PP-OCRv4_rec_infer.onnx, inputs: {x: [1, 3, 48, 320]}}
groups:
  - name: ocr
    models: [ocr_det, ocr_cls, ocr_rec]
    after: {ocr_cls: [ocr_det], ocr_rec: [ocr_cls]}
    period_ms: 200
`},
}

// overheadSpin is the Config.Spin of BenchmarkOverhead's polling workers
// (left out with -short).
const overheadSpin = 200 * time.Microsecond

// overheadRounds is how many times BenchmarkOverhead alternates the plain
// calls and the runtime (3 with -short unless given).
var overheadRounds = flag.Int("overhead-rounds", 5, "rounds of BenchmarkOverhead (plain calls and the runtime taking turns)")

// BenchmarkOverhead compares the runtime with running the same subgraphs
// back to back with plain ONNX Runtime calls (package ort) on the same
// pinned core. The plan puts every subgraph on one core (pinned, or with
// the workers unpinned: Config.NoPin; pinned with an event loop that
// sleeps until each arrival instead of polling the last millisecond:
// Config.ArrivalSpin; pinned with workers that poll for overheadSpin
// before they sleep: Config.Spin) and cuts each model in two, so requests
// hand tensors between subgraphs. Two kinds of run:
//
//   - one request at a time (period three times the plain latency), so
//     there is no queueing: the difference in latency is what the runtime
//     adds (timer, event loop, dispatcher, thread wake-ups) plus what the
//     idle core between requests costs the next one (cooled caches).
//     Reported: plain_ms and runtime_ms per request (means) with
//     overhead_%, the medians' overhead_p50_%, and plain_spaced_ms with
//     overhead_spaced_% and overhead_spaced_p50_%: the plain calls with
//     requests spaced as the runtime's arrivals, so that the idle core
//     costs both the same.
//   - back to back ("-b2b" modes): requests arrive twice as fast as plain
//     calls serve them, with no backlog bound, so the runtime's worker
//     never idles; b2b_ms is the run's elapsed time per request (the first
//     arrival to the last completion, over the requests) and
//     overhead_b2b_% compares it with plain_ms: the runtime's throughput
//     against plain calls back to back.
//
// b.N is the requests of one measurement. The plain calls and the runtime
// take turns -overhead-rounds times (default 5, 3 with -short), so that a change in
// the machine's load hits both alike; every figure is the median over the
// rounds (a ratio: the median of the rounds' ratios). OCR takes about
// 0.6 s a request and round at one request at a time:
//
//	go test ./runtime -run '^$' -bench Overhead/voice -benchtime 200x -overhead-rounds 15
//	go test ./runtime -run '^$' -bench Overhead/ocr -benchtime 30x
func BenchmarkOverhead(b *testing.B) {
	lib := assets.Require(b, assets.ORTLibrary())
	rounds := *overheadRounds
	if testing.Short() && !flagSet("overhead-rounds") {
		rounds = 3
	}
	if rounds < 1 {
		b.Fatalf("-overhead-rounds %d: want at least 1", rounds)
	}
	for _, wl := range overheadWorkloads {
		for _, mode := range []struct {
			name        string
			pin         bool
			spin        time.Duration
			arrivalSpin time.Duration
			b2b         bool
		}{
			{"pinned", true, 0, 0, false},
			{"pinned-sleep", true, 0, -1, false},
			{"unpinned", false, 0, 0, false},
			{"pinned-spin", true, overheadSpin, 0, false},
			{"pinned-b2b", true, 0, 0, true},
			{"unpinned-b2b", false, 0, 0, true},
		} {
			if mode.spin > 0 && testing.Short() {
				continue
			}
			b.Run(wl.name+"/"+mode.name, func(b *testing.B) {
				w := workloadtest.Load(b, wl.text)
				pl := hwtest.HostPair(b)
				p := halvesPlan(b, w, pl.Processors[0].Name)
				c := Config{Workload: w, Platform: pl, Plan: p, Cost: cost.NewAnalytic(pl), Library: lib, Duration: time.Second, Seed: 1, NoPin: !mode.pin, Spin: mode.spin, ArrivalSpin: mode.arrivalSpin}
				c, err := c.withDefaults()
				if err != nil {
					b.Fatal(err)
				}
				rt, err := ort.Open(lib)
				if err != nil {
					b.Fatal(err)
				}
				pr, err := prepare(&c, rt)
				if err != nil {
					b.Fatal(err)
				}
				defer pr.close()
				pr.warmup(3)
				var cores []int
				if mode.pin {
					cores = pl.Processors[0].Cores
				}
				period := w.Groups[0].Period
				var m roundFigures
				dropped := 0
				for range rounds {
					plain, plainP50 := plainRequests(b, pr, cores, b.N, 0)
					m.add("plain_ms", ms(plain))
					run := c
					if mode.b2b {
						run.Scale = float64(period) / float64(plain/2)
						run.Backlog = -1
						run.Duration = time.Duration(b.N) * plain / 2
						run.DrainTimeout = time.Duration(b.N) * plain * 4
					} else {
						run.Scale = float64(period) / float64(3*plain)
						run.Duration = time.Duration(b.N) * time.Duration(float64(period)/run.Scale)
					}
					res, err := Run(context.Background(), run)
					if err != nil {
						b.Fatal(err)
					}
					g := res.Groups[0]
					m.add("handoff_us", float64(res.HandOff)/1e3)
					m.add("report_us", float64(res.Report)/1e3)
					m.add("arrival_lag_us", float64(res.ArrivalLag)/1e3)
					m.add("runtime_busy_ms", ms(busyPer(res)))
					if mode.b2b {
						if g.Completed != g.Requests {
							b.Fatalf("%d of %d requests completed", g.Completed, g.Requests)
						}
						perReq := res.Elapsed / time.Duration(g.Completed)
						m.add("b2b_ms", ms(perReq))
						m.add("overhead_b2b_%", pct(perReq, plain))
						continue
					}
					// The plain calls again with requests spaced as the
					// runtime's arrivals: the core idles between them and
					// its caches cool, as in the run.
					spaced, spacedP50 := plainRequests(b, pr, cores, b.N, time.Duration(float64(period)/run.Scale))
					// A busy machine can slow runs enough to shed a request;
					// the figures are over the completed ones.
					dropped += g.Dropped
					m.add("runtime_ms", ms(g.Mean))
					m.add("overhead_%", pct(g.Mean, plain))
					m.add("overhead_p50_%", pct(g.P50, plainP50))
					m.add("plain_spaced_ms", ms(spaced))
					m.add("overhead_spaced_%", pct(g.Mean, spaced))
					m.add("overhead_spaced_p50_%", pct(g.P50, spacedP50))
				}
				if !mode.b2b {
					b.ReportMetric(float64(dropped), "dropped")
				}
				m.report(b)
			})
		}
	}
}

// flagSet reports whether the named flag was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// roundFigures collects BenchmarkOverhead's figures per round.
type roundFigures struct {
	names []string
	vals  map[string][]float64
}

func (m *roundFigures) add(name string, v float64) {
	if m.vals == nil {
		m.vals = map[string][]float64{}
	}
	if _, ok := m.vals[name]; !ok {
		m.names = append(m.names, name)
	}
	m.vals[name] = append(m.vals[name], v)
}

// report reports each figure's median over the rounds.
func (m *roundFigures) report(b *testing.B) {
	for _, name := range m.names {
		v := slices.Clone(m.vals[name])
		slices.Sort(v)
		med := v[len(v)/2]
		if len(v)%2 == 0 {
			med = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		b.ReportMetric(med, name)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// pct is how much longer a is than b, in percent of b.
func pct(a, b time.Duration) float64 { return 100 * (float64(a) - float64(b)) / float64(b) }

// busyPer is the processors' busy time per request of a one-group run.
func busyPer(res *Result) time.Duration {
	var busy time.Duration
	for _, p := range res.Procs {
		busy += p.Busy
	}
	return busy / time.Duration(max(res.Groups[0].Requests, 1))
}

// plainRequests runs n requests of the program's first group with plain
// ort calls on the calling goroutine's thread, pinned to cores (none:
// unpinned), each job in job order (a topological order), and returns the
// mean and the median time per request. With a period, request k starts no
// earlier than k·period (the CPU idles in between), else right after the
// previous one.
func plainRequests(b testing.TB, pr *prepared, cores []int, n int, period time.Duration) (mean, p50 time.Duration) {
	if len(cores) > 0 {
		goruntime.LockOSThread()
		defer goruntime.UnlockOSThread()
		restore, err := pinThread(cores)
		if err != nil {
			b.Fatal(err)
		}
		defer restore()
	}
	prog := pr.prog.Program
	times := make([]time.Duration, n)
	var total time.Duration
	begin := time.Now()
	for k := 0; k < n; k++ {
		if period > 0 {
			time.Sleep(time.Until(begin.Add(time.Duration(k) * period)))
		}
		t0 := time.Now()
		tensors := map[tkey]*graph.Data{}
		for _, ji := range prog.Groups[0].Jobs {
			j := &prog.Jobs[ji]
			if j.Kind != dispatch.Compute {
				continue
			}
			s := pr.jobSub[ji]
			in := make([]*graph.Data, len(s.inputs))
			for i, name := range s.inputs {
				if s.fromModel[i] {
					in[i] = s.pool[i][k%len(s.pool[i])]
				} else {
					in[i] = tensors[tkey{j.Model, name, -1}]
				}
			}
			out, err := s.runner.Run(in)
			if err != nil {
				b.Fatal(err)
			}
			for i, name := range s.outputs {
				tensors[tkey{j.Model, name, -1}] = out[i]
			}
		}
		times[k] = time.Since(t0)
		total += times[k]
	}
	slices.Sort(times)
	return total / time.Duration(n), stats.Percentile(times, 0.5)
}

// halvesPlan cuts every model into two halves of its layers, both on proc.
func halvesPlan(b testing.TB, w *workload.Workload, proc string) *plan.Plan {
	p := &plan.Plan{Planner: "halves"}
	for _, m := range w.Models {
		all := make(graph.LayerSet, len(m.Layers.Layers))
		for k := range all {
			all[k] = k
		}
		mp := plan.ModelPlan{Model: m.Name}
		if half := len(all) / 2; half > 0 {
			mp.Subgraphs = []plan.Subgraph{{Layers: all[:half], Processor: proc}, {Layers: all[half:], Processor: proc}}
		} else {
			mp.Subgraphs = []plan.Subgraph{{Layers: all, Processor: proc}}
		}
		p.Models = append(p.Models, mp)
	}
	return p
}
