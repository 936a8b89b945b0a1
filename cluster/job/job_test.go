package job

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/internal/fuzzcheck"
)

func gavel(t testing.TB) *throughput.Table {
	tb, err := throughput.Gavel()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestGenerateDeterministic(t *testing.T) {
	tb := gavel(t)
	cfg := GenConfig{Jobs: 500, Rate: 5.6, Seed: 3, MultiGPU: true}
	a, err := Generate(cfg, tb)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(cfg, tb)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different jobs")
	}
	cfg.Seed = 4
	c, _ := Generate(cfg, tb)
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, same jobs")
	}
	multi, long := 0, 0
	for _, j := range a {
		if j.GPUs > 1 {
			multi++
		}
		if j.Duration > 60*1000 {
			long++
		}
	}
	// 30% multi-GPU and 20% long jobs, ± a few standard deviations.
	if multi < 110 || multi > 190 || long < 70 || long > 130 {
		t.Errorf("%d multi-GPU and %d long jobs of 500", multi, long)
	}
	// Mean inter-arrival 3600/5.6 s.
	if mean := a[len(a)-1].Arrival / float64(len(a)-1); mean < 550 || mean > 740 {
		t.Errorf("mean inter-arrival %.0f s, want about 643", mean)
	}
	st, _ := Generate(GenConfig{Jobs: 10, Static: true, Seed: 1}, tb)
	if st[9].Arrival != 0 {
		t.Error("static trace with arrivals")
	}
}

func TestRoundTripAndFormats(t *testing.T) {
	tb := gavel(t)
	jobs, _ := Generate(GenConfig{Jobs: 20, Rate: 2, Seed: 1}, tb)
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, jobs); err != nil {
		t.Fatal(err)
	}
	back, err := Parse("t.jsonl", buf.Bytes(), "")
	for i := range back {
		if back[i].Line != i+1 {
			t.Errorf("job %d read from line %d", i, back[i].Line)
		}
		back[i].Line = 0
	}
	if err != nil || !reflect.DeepEqual(back, jobs) {
		t.Fatalf("round trip: %v", err)
	}
	gv := "ResNet-50 (batch size 64)\tpython main.py\t--num_steps\t1\t1000\t1\t1.000000\t-1.000000\t0.0\n" +
		"LM (batch size 20)\tcmd\t--steps\t0\t500\t4\t1\t-1\t30\n"
	g, err := Parse("t.trace", []byte(gv), "")
	if err != nil || len(g) != 2 || g[1].GPUs != 4 || g[1].Steps != 500 || g[1].Arrival != 30 {
		t.Fatalf("gavel: %v %+v", err, g)
	}
	y := "jobs:\n  - {type: A3C, gpus: 1, steps: 10, arrival_s: 0}\n  - type: LM (batch size 5)\n    gpus: 2\n    steps: 7\n    arrival_s: 5\n    elastic: {min_gpus: 1, max_gpus: 2}\n"
	yj, err := Parse("t.yaml", []byte(y), "")
	if err != nil || len(yj) != 2 || yj[1].Elastic.Max != 2 {
		t.Fatalf("yaml: %v %+v", err, yj)
	}
	c, _ := hw.Preset("gavel-108")
	if err := Validate("t.yaml", yj, tb, c); err != nil {
		t.Fatal(err)
	}
}

func TestBadInput(t *testing.T) {
	tb := gavel(t)
	c, _ := hw.Preset("gavel-108")
	for _, tc := range []struct{ name, file, in, want string }{
		{"zero steps", "a.jsonl", `{"type": "A3C", "gpus": 1, "steps": 0}`, "a.jsonl:1: steps must be a positive number, got 0"},
		{"negative steps", "a.jsonl", "\n" + `{"type": "A3C", "gpus": 1, "steps": -3}`, "a.jsonl:2: steps must be"},
		{"unknown field", "a.jsonl", `{"type": "A3C", "gpus": 1, "steps": 1, "foo": 1}`, `a.jsonl:1: json: unknown field "foo"`},
		{"syntax", "a.jsonl", `{"type": "A3C", `, "a.jsonl:1:"},
		{"wrong type", "a.jsonl", `{"type": "A3C", "gpus": "x", "steps": 1}`, "a.jsonl:1: gpus: want int, got string"},
		{"order", "a.jsonl", `{"type": "A3C", "gpus": 1, "steps": 1, "arrival_s": 5}` + "\n" + `{"type": "A3C", "gpus": 1, "steps": 1, "arrival_s": 1}`, "a.jsonl:2: arrival 1s before"},
		{"gavel fields", "a.trace", "A3C\tcmd\t1\n", "a.trace:1: want 9 tab-separated fields"},
		{"gavel number", "a.trace", "A3C\tc\ta\t0\tten\t1\t1\t-1\t0\n", `a.trace:1: total_steps: not a number: "ten"`},
		{"gavel scale", "a.trace", "A3C\tc\ta\t0\t10\t0.5\t1\t-1\t0\n", "scale_factor must be a positive integer"},
		{"yaml field", "a.yaml", "jobs:\n  - {type: A3C, gpus: 1, steps: 1, bogus: 2}\n", "a.yaml:2:"},
		{"empty", "a.jsonl", "", "no jobs"},
		{"elastic", "a.jsonl", `{"type": "A3C", "gpus": 3, "steps": 1, "elastic": {"min_gpus": 1, "max_gpus": 2}}`, "elastic: gpus 3 outside 1..2"},
		{"dag", "a.jsonl", `{"stages": [{"name": "a", "type": "A3C", "gpus": 1, "steps": 1, "after": ["b"]}]}`, `after "b": no earlier stage`},
		{"unknown model", "a.jsonl", `{"model": "gpt-9", "batch": 8, "gpus": 1, "steps": 1}`, `a.jsonl:1: unknown model "gpt-9"`},
		{"model batch", "a.jsonl", `{"model": "opt-350m", "gpus": 1, "steps": 1}`, "a.jsonl:1: model opt-350m: batch (the global batch) must be"},
		{"preset input", "a.jsonl", `{"model": "opt-350m", "input": "3x8x8", "batch": 8, "gpus": 1, "steps": 1}`, "input is for zoo networks"},
		{"model and type", "a.jsonl", `{"model": "opt-350m", "type": "A3C", "batch": 8, "gpus": 1, "steps": 1}`, `type "A3C" and model opt-350m both given`},
		{"batch alone", "a.yaml", "jobs:\n  - {type: A3C, gpus: 1, steps: 1, batch: 8}\n", "a.yaml:2: input and batch need a model"},
	} {
		_, err := Parse(tc.file, []byte(tc.in), "")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, in, want string }{
		{"unknown type", `{"type": "GPT-9", "gpus": 1, "steps": 1}`, `job 0: unknown job type "GPT-9"`},
		{"too many GPUs", `{"type": "LM (batch size 20)", "gpus": 64, "steps": 1}`, "asks for 64 GPUs, more than the cluster gavel-108 holds of any type (36"},
		{"scale", `{"type": "A3C", "gpus": 2, "steps": 1}`, `job type "A3C" has no throughput for 2 GPUs`},
	} {
		jobs, err := Parse("b.jsonl", []byte(tc.in), "")
		if err == nil {
			err = Validate("b.jsonl", jobs, tb, c)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func FuzzTraceParse(f *testing.F) {
	f.Add("a.jsonl", []byte(`{"type": "A3C", "gpus": 1, "steps": 10, "arrival_s": 0}`))
	f.Add("a.trace", []byte("A3C\tc\ta\t0\t10\t1\t1\t-1\t0\n"))
	f.Add("a.yaml", []byte("jobs:\n  - {type: A3C, gpus: 1, steps: 1}\n"))
	f.Add("m.jsonl", []byte(`{"model": "resnet50", "input": "3x224x224", "batch": 64, "gpus": 1, "steps": 10, "arrival_s": 0}`))
	f.Add("m.trace", []byte("model:opt-350m (batch size 64)\tc\ta\t0\t10\t1\t1\t-1\t0\n"))
	f.Fuzz(func(t *testing.T, file string, data []byte) {
		file = strings.ReplaceAll(file, "\n", "") // paths are one line
		jobs, err := Parse(file, data, "")
		if err != nil {
			fuzzcheck.OneLine(t, err)
			return
		}
		for i := range jobs {
			if jobs[i].Steps <= 0 || jobs[i].GPUs < 1 {
				t.Fatalf("accepted %+v", jobs[i])
			}
			if m, in, b, ok := ParseModelType(jobs[i].Type); ok && (m != jobs[i].Model || in != jobs[i].Input || b != jobs[i].Batch) {
				t.Fatalf("model job %+v reads back as %q %q %d", jobs[i], m, in, b)
			}
		}
	})
}
