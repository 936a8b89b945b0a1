package runtime

import (
	"context"
	goruntime "runtime"
	"slices"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
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

// BenchmarkOverhead compares a request's latency through the runtime with
// running the same subgraphs back to back with plain ONNX Runtime calls
// (package ort) on the same pinned core. The plan puts every subgraph on
// one core (pinned, or with the workers unpinned: Config.NoPin; pinned with
// an event loop that sleeps until each arrival instead of polling the last
// millisecond: Config.ArrivalSpin; pinned with workers that poll for
// overheadSpin before they sleep: Config.Spin) and cuts
// each model in two, so requests hand tensors between
// subgraphs. Requests arrive one at a time (period three times the plain
// latency), so there is no queueing: the difference is what the runtime
// adds (timer, event loop, dispatcher, channel hops, thread wake-ups).
// Reported: plain_ms and runtime_ms per request (means) with overhead_%,
// and the medians with overhead_p50_% (robust to other load on the
// machine, which hits the two measurements at different times).
//
//	go test ./runtime -run '^$' -bench Overhead -benchtime 100x
func BenchmarkOverhead(b *testing.B) {
	lib := assets.Require(b, assets.ORTLibrary())
	for _, wl := range overheadWorkloads {
		for _, mode := range []struct {
			name        string
			pin         bool
			spin        time.Duration
			arrivalSpin time.Duration
		}{
			{"pinned", true, 0, 0},
			{"pinned-sleep", true, 0, -1},
			{"unpinned", false, 0, 0},
			{"pinned-spin", true, overheadSpin, 0},
		} {
			if mode.spin > 0 && testing.Short() {
				continue
			}
			pin := mode.pin
			b.Run(wl.name+"/"+mode.name, func(b *testing.B) {
				w := loadWorkload(b, wl.text)
				pl := hostPlatform(b)
				p := halvesPlan(b, w, pl.Processors[0].Name)
				c := Config{Workload: w, Platform: pl, Plan: p, Cost: cost.NewAnalytic(pl), Library: lib, Duration: time.Second, Seed: 1, NoPin: !pin, Spin: mode.spin, ArrivalSpin: mode.arrivalSpin}
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
				if pin {
					cores = pl.Processors[0].Cores
				}
				plain, plainP50 := plainRequests(b, pr, cores, b.N, 0)
				c.Scale = float64(w.Groups[0].Period) / float64(3*plain)
				// The same, with requests spaced as the runtime's arrivals: the
				// core idles between them and its caches cool, as in the run.
				spaced, spacedP50 := plainRequests(b, pr, cores, b.N, time.Duration(float64(w.Groups[0].Period)/c.Scale))
				c.Duration = time.Duration(b.N) * time.Duration(float64(w.Groups[0].Period)/c.Scale)
				res, err := Run(context.Background(), c)
				if err != nil {
					b.Fatal(err)
				}
				g := res.Groups[0]
				// A busy machine can slow runs enough to shed a request; the
				// figures are over the completed ones.
				b.ReportMetric(float64(g.Dropped), "dropped")
				b.ReportMetric(float64(plain)/1e6, "plain_ms")
				b.ReportMetric(float64(g.Mean)/1e6, "runtime_ms")
				b.ReportMetric(100*(float64(g.Mean)-float64(plain))/float64(plain), "overhead_%")
				b.ReportMetric(float64(plainP50)/1e6, "plain_p50_ms")
				b.ReportMetric(float64(g.P50)/1e6, "runtime_p50_ms")
				b.ReportMetric(100*(float64(g.P50)-float64(plainP50))/float64(plainP50), "overhead_p50_%")
				b.ReportMetric(float64(spaced)/1e6, "plain_spaced_ms")
				b.ReportMetric(100*(float64(g.Mean)-float64(spaced))/float64(spaced), "overhead_spaced_%")
				b.ReportMetric(100*(float64(g.P50)-float64(spacedP50))/float64(spacedP50), "overhead_spaced_p50_%")
				b.ReportMetric(float64(res.HandOff)/1e3, "handoff_us")
				b.ReportMetric(float64(res.Report)/1e3, "report_us")
				var busy time.Duration
				for _, p := range res.Procs {
					busy += p.Busy
				}
				b.ReportMetric(float64(busy)/float64(g.Requests)/1e6, "runtime_busy_ms")
			})
		}
	}
}

// plainRequests runs n requests of the program's first group with plain
// ort calls on the calling goroutine's thread, pinned to cores (none:
// unpinned), each job in job order (a topological order), and returns the
// mean and the median time per request. With a period, request k starts no
// earlier than k·period (the CPU idles in between), else right after the
// previous one.
func plainRequests(b *testing.B, pr *prepared, cores []int, n int, period time.Duration) (mean, p50 time.Duration) {
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
	return total / time.Duration(n), percentile(times, 0.5)
}

// halvesPlan cuts every model into two halves of its layers, both on proc.
func halvesPlan(b *testing.B, w *workload.Workload, proc string) *plan.Plan {
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
