package report

import (
	"fmt"
	"math/rand"
	"sort"
	"time"
)

// sampleProcs and sampleSpans make a small, plausible schedule: three groups
// of models on a phone-like platform, with a two-lane NPU and a few late
// requests. Seeded, so every run gives the same spans.
var sampleProcs = []string{"cpu-big", "cpu-little", "gpu", "npu", "dsp"}

func sampleSpans() []Span {
	rng := rand.New(rand.NewSource(7))
	type stage struct {
		proc   string
		layers string
		dur    time.Duration
	}
	type model struct {
		group, name string
		period      time.Duration
		offset      time.Duration
		stages      []stage
	}
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	workload := []model{
		{"camera", "mobilenet_v2", ms(33.3), 0, []stage{{"npu", "L0-40", ms(4.1)}, {"cpu-big", "L41-52", ms(1.3)}}},
		{"camera", "yolov5s", ms(33.3), ms(1), []stage{{"gpu", "L0-80", ms(11.5)}, {"npu", "L81-120", ms(5.2)}, {"cpu-big", "L121-140", ms(2.4)}}},
		{"audio", "mobilebert", ms(50), ms(5), []stage{{"dsp", "L0-300", ms(14)}, {"cpu-little", "L301-420", ms(6.5)}}},
		{"scene", "deeplabv3_mobilenet_v3_large", ms(100), ms(12), []stage{{"gpu", "L0-90", ms(18)}, {"npu", "L91-150", ms(9)}}},
		{"scene", "deit_tiny", ms(100), ms(20), []stage{{"cpu-big", "L0-60", ms(16)}}},
	}
	type release struct {
		t   time.Duration
		m   int
		req int
	}
	var releases []release
	for mi, m := range workload {
		for req := 0; ; req++ {
			t := m.offset + time.Duration(req)*m.period
			if t > ms(240) {
				break
			}
			releases = append(releases, release{t, mi, req})
		}
	}
	sort.SliceStable(releases, func(i, j int) bool { return releases[i].t < releases[j].t })
	free := map[string][]time.Duration{"npu": {0, 0}} // the NPU runs two subgraphs at once
	var spans []Span
	for _, r := range releases {
		m := workload[r.m]
		late := rng.Intn(8) == 0
		t := r.t
		for _, st := range m.stages {
			d := st.dur + time.Duration(rng.Int63n(int64(st.dur/5)))
			lanes := free[st.proc]
			if lanes == nil {
				lanes = []time.Duration{0}
				free[st.proc] = lanes
			}
			lane := 0
			for l := range lanes {
				if lanes[l] < lanes[lane] {
					lane = l
				}
			}
			start := max(t, lanes[lane])
			lanes[lane] = start + d
			spans = append(spans, Span{
				Processor: st.proc,
				Label:     fmt.Sprintf("%s %s", m.name, st.layers),
				Group:     m.group,
				Model:     m.name,
				Request:   r.req,
				Start:     start,
				End:       start + d,
				Late:      late,
			})
			t = start + d
		}
	}
	return spans
}
