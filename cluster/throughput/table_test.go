package throughput

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/fuzzcheck"
)

func TestGavel(t *testing.T) {
	tb, err := Gavel()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tb.GPUs(), ","); got != "k80,p100,v100" {
		t.Fatalf("gpus %s", got)
	}
	if n := len(tb.JobTypes()); n != 26 {
		t.Errorf("%d job types, want 26", n)
	}
	if n := tb.NumKeys(); n != 83 {
		t.Errorf("%d keys, want 83", n)
	}
	id, err := tb.Resolve("ResNet-18 (batch size 16)", 1)
	if err != nil {
		t.Fatal(err)
	}
	v := tb.GPUIndex("v100")
	if a := tb.Alone(id, v); a < 32.35 || a > 32.36 {
		t.Errorf("alone %g, want 32.353 (the file's first entry)", a)
	}
	b, _ := tb.Resolve("ResNet-18 (batch size 64)", 1)
	ta, tbb, ok := tb.Pair(id, b, v)
	if !ok || ta < 32.35 || tbb < 24.09 || tbb > 24.1 {
		t.Errorf("pair %g %g %v", ta, tbb, ok)
	}
	if sc := tb.Scales("LM (batch size 20)"); len(sc) != 4 || sc[3] != 8 {
		t.Errorf("scales %v", sc)
	}
	r4, _ := tb.Resolve("ResNet-50 (batch size 64)", 4)
	if !tb.HasSpread(r4, v) || tb.Spread(r4, v) <= 0 {
		t.Errorf("spread %g alone %g", tb.Spread(r4, v), tb.Alone(r4, v))
	}
	for _, tc := range []struct {
		typ   string
		scale int
		want  string
	}{
		{"Nope", 1, `unknown job type "Nope"`},
		{"A3C", 4, `job type "A3C" has no throughput for 4 GPUs (scale factors: [1])`},
	} {
		if _, err := tb.Resolve(tc.typ, tc.scale); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.typ, err)
		}
	}
}

func TestParseGavelErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"v100": {"bad": {"null": 1}}}`, `bad job key "bad"`},
		{`{"v100": {"('a', 1)": {"null": -1}}}`, "non-negative"},
		{`{"v100": {"('a', 1)": {"('b', 1)": [1, 2]}}}`, `partner "('b', 1)" has no row`},
		{`{"v100": `, "line 1"},
		{`{}`, "no worker types"},
	} {
		if _, err := ParseGavel("t.json", []byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzGavelParse(f *testing.F) {
	fuzzcheck.OneLineErrors(f, func(data []byte) error {
		_, err := ParseGavel("f.json", data)
		return err
	}, []byte(`{"v100": {"('a', 1)": {"null": 1, "('a', 1)": [0.5, 0.5]}}, "v100_unconsolidated": {"('a', 1)": {"null": 1}}}`))
}
