package train

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/fuzzcheck"
)

func TestPresetsValidate(t *testing.T) {
	for _, m := range Presets() {
		if err := m.Validate(); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
	m, _ := Preset("gpt3-175b")
	if p := float64(m.Params()) / 1e9; math.Abs(p-174.6) > 0.5 {
		t.Errorf("gpt3-175b has %.1fB parameters, want about 174.6B", p)
	}
	l, _ := Preset("llama-3-8b")
	if p := float64(l.Params()) / 1e9; math.Abs(p-8.03) > 0.05 {
		t.Errorf("llama-3-8b has %.2fB parameters, want 8.03B", p)
	}
	l70, _ := Preset("llama-3-70b")
	if p := float64(l70.Params()) / 1e9; math.Abs(p-70.6) > 0.2 {
		t.Errorf("llama-3-70b has %.2fB parameters, want 70.6B", p)
	}
}

// The SC'21 table's parameter counts follow the paper's formula, which
// the models reproduce (V = 51,200, s = 2,048).
func TestSC21Params(t *testing.T) {
	data, err := os.ReadFile(assets.RequireTraining(t, "megatron_sc21_table1.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		want, _ := strconv.ParseFloat(r[0], 64)
		m, err := ParseModelLine("gpt:hidden=" + r[2] + ",layers=" + r[3] + ",heads=" + r[1] + ",seq=2048,vocab=51200")
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(m.Params()) / 1e9; math.Abs(got-want) > 0.05+0.01*want { // the table rounds to 0.1B
			t.Errorf("%sB: %.2fB parameters", r[0], got)
		}
	}
}

func TestParseModelLine(t *testing.T) {
	m, err := ParseModelLine("gpt:hidden=12288,layers=96,heads=96,seq=2048,vocab=51200")
	if err != nil {
		t.Fatal(err)
	}
	if m.Hidden != 12288 || m.Layers != 96 || m.Heads != 96 || m.Seq != 2048 || m.Vocab != 51200 || !m.Tied || !m.Dropout || m.Positions != 2048 {
		t.Errorf("got %+v", m)
	}
	l, err := ParseModelLine("llama:hidden=4096,layers=32,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256")
	if err != nil {
		t.Fatal(err)
	}
	if !l.Gated || l.Tied || l.Dropout || l.Positions != 0 {
		t.Errorf("llama defaults: %+v", l)
	}
	for _, tc := range []struct{ in, want string }{
		{"gpt:hidden=100,layers=2,heads=3,seq=8", "heads 3 do not divide hidden 100"},
		{"gpt:hidden=64,layers=2,heads=4,seq=8,foo=1", `unknown key "foo"`},
		{"gpt:hidden=x", `hidden: "x" is not an integer`},
		{"gpt:hidden=64,hidden=64", "hidden given twice"},
		{"moe:hidden=64", `unknown kind "moe"`},
		{"gpt:hidden=64,layers=2,heads=4,seq=8,kv_heads=3", "kv_heads 3 must divide heads 4"},
		{"gpt:hidden=64,layers=2,heads=4,seq=8,experts=4,top_k=8", "top_k 8 must be at most experts 4"},
	} {
		_, err := ParseModelLine(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.in, err, tc.want)
		}
	}
}

func TestResolveModel(t *testing.T) {
	if _, err := ResolveModel("gpt3-1t"); err != nil {
		t.Error(err)
	}
	if _, err := ResolveModel("nope"); err == nil || !strings.Contains(err.Error(), "unknown model") {
		t.Errorf("got %v", err)
	}
	m, err := ParseModel("m.yaml", []byte("name: tiny\nhidden: 64\nlayers: 2\nheads: 4\nvocab: 100\nseq: 16\nexperts: 4\ntop_k: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Params() <= 0 || m.activeLayerParams() >= m.LayerParams() {
		t.Errorf("mixture of experts: active %d of %d layer parameters", m.activeLayerParams(), m.LayerParams())
	}
	if _, err := ParseModel("m.yaml", []byte("hidden: 64\nlayrs: 2\n")); err == nil || !strings.Contains(err.Error(), "m.yaml") {
		t.Errorf("unknown field: %v", err)
	}
}

func FuzzModelLine(f *testing.F) {
	for _, s := range []string{"gpt:hidden=12288,layers=96,heads=96,seq=2048,vocab=51200", "llama:hidden=64,layers=2,heads=4,kv_heads=2,ffn=100,seq=8", "bert:hidden=64,layers=2,heads=4,seq=8,experts=4,top_k=2", "gpt:", "gpt:hidden=-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseModelLine(s)
		if err != nil {
			fuzzcheck.OneLine(t, err)
			return
		}
		if m.Params() <= 0 || m.FLOPsPerToken() <= 0 {
			t.Fatalf("%s: non-positive size", s)
		}
	})
}

func TestParseGPUList(t *testing.T) {
	l, err := ParseGPUList("128xA100-40, 64xV100-16")
	if err != nil || len(l) != 2 || l[0].Count != 128 || l[1].GPU.Name != "V100-16" {
		t.Fatalf("got %+v, %v", l, err)
	}
	c, err := MixedCluster(l, 8, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if c.GPUs("A100-40") != 128 || c.GPUs("V100-16") != 64 || len(c.Groups) != 2 || c.Groups[1].Nodes != 8 {
		t.Fatalf("cluster %+v", c)
	}
	for _, bad := range []string{"", "8xA100-40,8xA100-40", "0xA100-40", "8xNOPE", "8xA100-40,", "x"} {
		if _, err := ParseGPUList(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzGPUList(f *testing.F) {
	for _, s := range []string{"128xA100-40,128xV100-16", "8xGH-96", "1xA100-80,2xV100-16,4xRTX-2080Ti", ",", "3x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseGPUList(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		for _, e := range l {
			if e.Count <= 0 || e.GPU.Name == "" {
				t.Fatalf("%q: bad entry %+v", s, e)
			}
		}
		if c, err := MixedCluster(l, 8, 0, 100); err == nil && c.GPUs("") <= 0 {
			t.Fatalf("%q: empty cluster", s)
		}
	})
}
