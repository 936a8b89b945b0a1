package published

import (
	"math"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/fuzzcheck"
	"github.com/inlay-dev/inlay/train"
)

func load(t *testing.T, file string) []Case {
	t.Helper()
	cs, err := Load(assets.RequireTraining(t, file))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		file string
		rows int
	}{
		{"vtrain_single_node.csv", 1440},
		{"korthikanti_mlsys23.csv", 8},
		{"megatron_sc21_table1.csv", 10},
		{"sailor_gh200.csv", 26}, // 27 less the GPT-NEO N4_D4 row, another model's plan
	} {
		cs := load(t, tc.file)
		if len(cs) != tc.rows {
			t.Errorf("%s: %d cases, want %d", tc.file, len(cs), tc.rows)
		}
		for _, c := range cs {
			if c.MeasuredS <= 0 || c.Plan.GPUs() != c.Cluster.GPUs("") {
				t.Errorf("%s %s: %.3f s on %d of %d GPUs", c.Set, c.Label, c.MeasuredS, c.Plan.GPUs(), c.Cluster.GPUs(""))
			}
		}
	}
	ls, err := LoadProfiles(assets.RequireTraining(t, "sailor/profiles_tmp_flat.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) < 200 {
		t.Errorf("%d profiled layers", len(ls))
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"unknown", "a,b\n1,2\n", "not a known data set"},
		{"cell", "params_billion,heads,hidden,layers,tp,pp,gpus,batch,tflops_per_gpu\n1,x,2304,24,1,1,32,512,137\n", "t.csv:2: heads"},
		{"fields", "params_billion,heads,hidden,layers,tp,pp,gpus,batch,tflops_per_gpu\n1,2\n", "t.csv:2: 2 fields"},
		{"empty", "params_billion,heads,hidden,layers,tp,pp,gpus,batch,tflops_per_gpu\n", "no rows"},
	} {
		_, err := Parse("t.csv", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.name, err, tc.want)
		}
	}
}

// The embedded calibration (train/calibrated.go) still describes the data
// it was fitted to: in-sample errors well inside the held-out ones that
// docs/results/training-fidelity.md reports.
func TestEmbeddedCalibration(t *testing.T) {
	limits := map[string]float64{"vtrain": 0.06, "korthikanti": 0.05, "sc21": 0.05, "sailor": 0.10}
	for _, f := range []string{"vtrain_single_node.csv", "korthikanti_mlsys23.csv", "megatron_sc21_table1.csv", "sailor_gh200.csv"} {
		cs := load(t, f)
		var rows []Row
		for i := range cs {
			g, _ := train.LookupGPU(cs[i].GPU)
			s, _, err := Predict(&cs[i], g.Eff)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, Row{Set: cs[i].Set, Shape: cs[i].Shape, MeasuredS: cs[i].MeasuredS, PredictedS: s, Err: s/cs[i].MeasuredS - 1})
		}
		sr := summarise(cs[0].Set, rows)
		if sr.Median > limits[sr.Set] {
			t.Errorf("%s: in-sample median |error| %.1f%% > %.0f%%", sr.Set, 100*sr.Median, 100*limits[sr.Set])
		}
	}
}

// Cross-validation holds each row out of the fit that scores it: here on
// the two A100-80 sets with a short fit.
func TestCrossValidate(t *testing.T) {
	cases := append(load(t, "korthikanti_mlsys23.csv"), load(t, "megatron_sc21_table1.csv")...)
	rep, err := CrossValidate(cases, nil, CVOptions{Fit: FitOptions{MaxEvals: 120}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sets) != 2 || len(rep.Fitted) != 1 || rep.Fitted[0].GPU != "A100-80" {
		t.Fatalf("sets %d, fitted %+v", len(rep.Sets), rep.Fitted)
	}
	for _, s := range rep.Sets {
		if s.Folds != "leave-one-out" || math.IsNaN(s.Median) || s.Worst > 0.3 {
			t.Errorf("%s: %s, median %.3f, worst %.3f", s.Set, s.Folds, s.Median, s.Worst)
		}
	}
	src := rep.GoSource("inlay train calibrate")
	if !strings.Contains(src, `"A100-80": {GEMM:`) || !strings.Contains(src, "func calibratedEfficiency") {
		t.Error("GoSource lacks the fitted entry")
	}
}

func FuzzPublishedParse(f *testing.F) {
	f.Add([]byte("params_billion,heads,hidden,layers,tp,pp,gpus,batch,tflops_per_gpu\n1.7,24,2304,24,1,1,32,512,137\n"))
	f.Add([]byte("gpus,global_batch,micro_batch,hidden_size,attention_heads,layers,seq_len,tp,dp,pp,iteration_ms\n2,16,8,1024,16,24,1024,1,1,2,372.1\n"))
	f.Add([]byte("model,nodes,gpus,gpu_type,dp,pp,tp,micro_batch,global_batch,microbatches_per_replica,layers_total,layers_per_stage,measured_iteration_s,measured_peak_mem_bytes,red_grads_s,source_file\nOPT-350,2,8,GH-96,1,2,4,8,32,4,26,12;14,0.65705,26942111744,0.00414,x\n"))
	f.Add([]byte("model,calculon_model,hidden,heads,layers,seq,ffn_hidden,gpus,tp,pp,dp,global_batch,micro_batch,pipeline_interleaving,full_recompute_s,selective_sp_s\n22B,m,6144,64,48,2048,24576,8,8,1,1,4,4,1,1.42,1.1\n"))
	fuzzcheck.Accepted(f, func(data []byte) ([]Case, error) { return Parse("f.csv", data) }, func(t *testing.T, cs []Case) {
		for i := range cs {
			if cs[i].Plan.GPUs() > 4096 || cs[i].Plan.GlobalBatch > 1<<13 || cs[i].Model.Layers > 256 {
				continue
			}
			_, _, err := Predict(&cs[i], Start)
			fuzzcheck.OneLine(t, err)
		}
	})
}
