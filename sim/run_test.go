package sim

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/dispatch"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/")

// spanLines formats spans as "lane label r<request> start-end[ late]" lines,
// times in ms, sorted by start then lane.
func spanLines(res *Result) []string {
	var out []string
	for _, s := range res.Spans {
		late := ""
		if s.Late {
			late = " late"
		}
		out = append(out, fmt.Sprintf("%s %s r%d %g-%g%s", s.Processor, s.Label, s.Request,
			float64(s.Start)/float64(ms), float64(s.End)/float64(ms), late))
	}
	return out
}

// one runs a single request per group (every group releases at time 0 and
// the horizon ends before the second arrival).
func one(t *testing.T, p *Program) *Result {
	t.Helper()
	res, err := Run(p, Options{Horizon: time.Nanosecond, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The schedules below are worked out by hand in the comments.
func TestHandSchedules(t *testing.T) {
	tests := []struct {
		name string
		prog func() *Program
		want []string
		lat  []time.Duration // per group, the single request's latency
	}{
		{
			// a0 on P0 [0,3]; copy over L [3,5]; a1 waits for P1, busy with b0
			// [0,5], then runs [5,9]. Group latency 9.
			name: "two models two processors with a transfer",
			prog: func() *Program {
				b := newProg().proc("P0", 1).proc("P1", 1).link("L", false)
				g := b.group("g", 100*ms, 100*ms)
				a, m := b.model(g, "a", 1), b.model(g, "b", 0)
				a0 := b.compute(a, "a0", "P0", 3*ms)
				tx := b.transfer(a, "a0>a1", "L", 2*ms, a0)
				b.compute(a, "a1", "P1", 4*ms, tx)
				b.compute(m, "b0", "P1", 5*ms)
				return b.build()
			},
			want: []string{"P0 a0 r0 0-3", "P1 b0 r0 0-5", "L a0>a1 r0 3-5", "P1 a1 r0 5-9"},
			lat:  []time.Duration{9 * ms},
		},
		{
			// At time 0 only lo's l0 is ready on P0 and starts [0,6]. hi's h1
			// becomes ready at 1 (after h0 on P1) and, although it has the
			// higher priority, waits: processors are not preempted. h1 [6,8].
			name: "non-preemption: high priority waits for the running job",
			prog: func() *Program {
				b := newProg().proc("P0", 1).proc("P1", 1)
				hi, lo := b.group("hi", 100*ms, 100*ms), b.group("lo", 100*ms, 100*ms)
				h, l := b.model(hi, "h", 0), b.model(lo, "l", 1)
				h0 := b.compute(h, "h0", "P1", 1*ms)
				b.compute(h, "h1", "P0", 2*ms, h0)
				b.compute(l, "l0", "P0", 6*ms)
				return b.build()
			},
			want: []string{"P0 l0 r0 0-6", "P1 h0 r0 0-1", "P0 h1 r0 6-8"},
			lat:  []time.Duration{8 * ms, 6 * ms},
		},
		{
			// Both ready at 0 on P0: the lower priority number runs first, even
			// though its group is listed second.
			name: "priority orders ready jobs",
			prog: func() *Program {
				b := newProg().proc("P0", 1)
				g1, g2 := b.group("first", 100*ms, 100*ms), b.group("second", 100*ms, 100*ms)
				b.compute(b.model(g1, "x", 5), "x0", "P0", 2*ms)
				b.compute(b.model(g2, "y", 1), "y0", "P0", 3*ms)
				return b.build()
			},
			want: []string{"P0 y0 r0 0-3", "P0 x0 r0 3-5"},
			lat:  []time.Duration{5 * ms, 3 * ms},
		},
		{
			// Concurrency 2: two of the three 4 ms jobs start at 0, the third
			// at 4 when a slot frees.
			name: "concurrency 2",
			prog: func() *Program {
				b := newProg().proc("P0", 2)
				g := b.group("g", 100*ms, 100*ms)
				m := b.model(g, "m", 0)
				b.compute(m, "j0", "P0", 4*ms)
				b.compute(m, "j1", "P0", 4*ms)
				b.compute(m, "j2", "P0", 4*ms)
				return b.build()
			},
			want: []string{"P0 j0 r0 0-4", "P0 j1 r0 0-4", "P0 j2 r0 4-8"},
			lat:  []time.Duration{8 * ms},
		},
		{
			// a0 [0,1], b0 [1,2] on P0 (a has priority). Copies of 3 ms share
			// the link: a's [1,4], b's waits until 4: [4,7]. a1 [4,5], b1 [7,8].
			name: "shared link contended by two transfers",
			prog: twoTransfers(true),
			want: []string{"P0 a0 r0 0-1", "P0 b0 r0 1-2", "L ta r0 1-4", "P1 a1 r0 4-5", "L tb r0 4-7", "P1 b1 r0 7-8"},
			lat:  []time.Duration{8 * ms},
		},
		{
			// The same with an unshared link: tb starts as soon as b0 ends.
			name: "unshared link carries transfers at once",
			prog: twoTransfers(false),
			want: []string{"P0 a0 r0 0-1", "P0 b0 r0 1-2", "L ta r0 1-4", "L tb r0 2-5", "P1 a1 r0 4-5", "P1 b1 r0 5-6"},
			lat:  []time.Duration{6 * ms},
		},
		{
			// after: {b: [a]}: b0 waits for a's last job (a1, [2,5]) although
			// P1 is idle from 0. b0 [5,6].
			name: "after dependency between models",
			prog: func() *Program {
				b := newProg().proc("P0", 1).proc("P1", 1)
				g := b.group("g", 100*ms, 100*ms)
				a, m := b.model(g, "a", 0), b.model(g, "b", 0)
				a0 := b.compute(a, "a0", "P0", 2*ms)
				a1 := b.compute(a, "a1", "P0", 3*ms, a0)
				b.compute(m, "b0", "P1", 1*ms, a1)
				return b.build()
			},
			want: []string{"P0 a0 r0 0-2", "P0 a1 r0 2-5", "P1 b0 r0 5-6"},
			lat:  []time.Duration{6 * ms},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := one(t, tc.prog())
			got := spanLines(res)
			sortByStart(got, res)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("schedule\n got %q\nwant %q", got, tc.want)
			}
			for gi, want := range tc.lat {
				g := res.Groups[gi]
				if g.Requests != 1 || g.Completed != 1 || g.P50 != want || g.Max != want {
					t.Errorf("group %s: %+v, want one request of latency %v", g.Name, g, want)
				}
			}
		})
	}
}

// sortByStart orders span lines by (start, lane order in res.Lanes, label):
// the order the tests write them in.
func sortByStart(lines []string, res *Result) {
	lane := map[string]int{}
	for i, l := range res.Lanes {
		lane[l] = i
	}
	idx := make([]int, len(lines))
	for i := range idx {
		idx[i] = i
	}
	spans := res.Spans
	less := func(a, b int) bool {
		x, y := spans[a], spans[b]
		if x.Start != y.Start {
			return x.Start < y.Start
		}
		if lane[x.Processor] != lane[y.Processor] {
			return lane[x.Processor] < lane[y.Processor]
		}
		return x.Label < y.Label
	}
	// insertion sort: tiny inputs
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && less(idx[j], idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	out := make([]string, len(lines))
	for i, k := range idx {
		out[i] = lines[k]
	}
	copy(lines, out)
}

// goldenProgram is a small mixed scenario: a camera group (two models, one
// after the other, with a copy) and an audio group with Poisson arrivals.
func goldenProgram() *Program {
	b := newProg().proc("cpu", 2).proc("npu", 1).link("cpu-npu", true)
	cam := b.group("camera", 10*ms, 10*ms)
	b.p.Groups[cam].Deadline = 12 * ms
	aud := b.group("audio", 7*ms, 7*ms)
	b.p.Groups[aud].Poisson = true
	det, rec := b.model(cam, "det", 0), b.model(cam, "rec", 1)
	d0 := b.compute(det, "det[0-3]", "npu", 3*ms)
	d1 := b.compute(det, "det[4-9]", "cpu", 2*ms, b.transfer(det, "det>cpu", "cpu-npu", 500*time.Microsecond, d0))
	b.compute(rec, "rec[0-5]", "cpu", 2500*time.Microsecond, d1)
	kws := b.model(aud, "kws", 2)
	k0 := b.compute(kws, "kws[0-2]", "cpu", 1*ms)
	b.compute(kws, "kws[3-4]", "npu", 1500*time.Microsecond, b.transfer(kws, "kws>npu", "cpu-npu", 400*time.Microsecond, k0))
	return b.build()
}

func summary(res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scale %g horizon %v end %v\n", res.Scale, res.Horizon, res.End)
	for _, g := range res.Groups {
		fmt.Fprintf(&b, "group %s requests %d completed %d late %d dropped %d p50 %v p99 %v mean %v max %v miss %.4f rate %.3f\n",
			g.Name, g.Requests, g.Completed, g.Late, g.Dropped, g.P50, g.P99, g.Mean, g.Max, g.MissRate, g.RateHz)
	}
	for _, p := range append(append([]ProcResult{}, res.Procs...), res.Links...) {
		fmt.Fprintf(&b, "server %s busy %v utilisation %.4f\n", p.Name, p.Busy, p.Utilisation)
	}
	return b.String()
}

func TestGoldenTrace(t *testing.T) {
	for _, scale := range []float64{1, 2.5} {
		name := fmt.Sprintf("trace_scale%g.golden", scale)
		t.Run(name, func(t *testing.T) {
			res, err := Run(goldenProgram(), Options{Seed: 7, Scale: scale, Requests: 30, Warmup: 5})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			b.WriteString(summary(res))
			for _, l := range spanLines(res) {
				b.WriteString(l + "\n")
			}
			path := filepath.Join("testdata", name)
			if *rewrite {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("trace differs from %s (run with -rewrite after checking the change):\n%s", path, firstDiff(b.String(), string(want)))
			}
		})
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, a, b)
		}
	}
	return ""
}

func TestDeterminism(t *testing.T) {
	run := func(seed int64) *Result {
		res, err := Run(goldenProgram(), Options{Seed: seed, Scale: 1.7})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(3), run(3)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different results")
	}
	c := run(4)
	if reflect.DeepEqual(a.Spans, c.Spans) {
		t.Error("different seeds gave identical Poisson schedules")
	}
}

func TestEventQueueOrder(t *testing.T) {
	var q eventQueue
	for i, at := range []time.Duration{5, 3, 5, 3, 0, 5} {
		q.push(event{at: at, group: int32(i)})
	}
	var got []int
	for len(q.a) > 0 {
		got = append(got, int(q.pop().group))
	}
	// Same time: scheduling order.
	if want := []int{4, 1, 3, 0, 2, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("scheduling in the past did not panic")
		}
	}()
	q.push(event{at: 4})
}

func TestRunCounts(t *testing.T) {
	p := goldenProgram()
	res, err := Run(p, Options{Scale: 0.5, Requests: 50, Warmup: 10})
	if err != nil {
		t.Fatal(err)
	}
	// The camera group has the longer period (10 ms against 7 ms) and sizes
	// the horizon: 60 requests every 20 ms at scale 0.5.
	if res.Horizon != 1200*ms {
		t.Errorf("horizon %v, want 1.2s", res.Horizon)
	}
	cam := res.Groups[0]
	if cam.Requests != 50 || cam.Completed != 50 || cam.Late != 0 {
		t.Errorf("camera %+v, want 50 measured requests all on time", cam)
	}
	if cam.P50 < 8*ms {
		t.Errorf("camera p50 %v is below its unloaded latency 8ms", cam.P50)
	}
	for _, pr := range res.Procs {
		if pr.Utilisation <= 0 || pr.Utilisation > 1 {
			t.Errorf("%s utilisation %v out of (0,1]", pr.Name, pr.Utilisation)
		}
	}
	if _, err := Run(p, Options{Scale: -1}); err == nil {
		t.Error("negative scale accepted")
	}
}

func TestDropLatePolicy(t *testing.T) {
	// At 3× the nominal rate the NPU (171 ms busy per 350 ms at scale 1) is
	// overloaded: requests queue past their deadline and are dropped.
	base := Options{Seed: 7, Scale: 3, Requests: 30, Warmup: 5}
	late, err := Run(goldenProgram(), base)
	if err != nil {
		t.Fatal(err)
	}
	drop := base
	drop.Policy = dispatch.DropLate
	dropped, err := Run(goldenProgram(), drop)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for i, g := range dropped.Groups {
		n += g.Dropped
		if g.Completed+g.Dropped != g.Requests {
			t.Errorf("group %s: %d completed + %d dropped != %d requests", g.Name, g.Completed, g.Dropped, g.Requests)
		}
		if want := float64(g.Late+g.Dropped) / float64(g.Requests); g.MissRate != want {
			t.Errorf("group %s: miss rate %v, want %v", g.Name, g.MissRate, want)
		}
		if late.Groups[i].Dropped != 0 {
			t.Errorf("CompleteLate dropped requests of %s", g.Name)
		}
	}
	if n == 0 {
		t.Fatal("no request dropped under overload")
	}
	if dropped.Meets() {
		t.Error("a run with drops meets its deadlines")
	}
}

// twoTransfers is models a (a0 on P0, a1 on P1) and b (b0, b1 likewise),
// each a 1 ms job, a 3 ms copy over link L (shared or not) and a 1 ms job.
func twoTransfers(shared bool) func() *Program {
	return func() *Program {
		b := newProg().proc("P0", 1).proc("P1", 1).link("L", shared)
		g := b.group("g", 100*ms, 100*ms)
		a, m := b.model(g, "a", 0), b.model(g, "b", 1)
		a0 := b.compute(a, "a0", "P0", 1*ms)
		b.compute(a, "a1", "P1", 1*ms, b.transfer(a, "ta", "L", 3*ms, a0))
		b0 := b.compute(m, "b0", "P0", 1*ms)
		b.compute(m, "b1", "P1", 1*ms, b.transfer(m, "tb", "L", 3*ms, b0))
		return b.build()
	}
}
