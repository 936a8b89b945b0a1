package verify

import (
	"testing"
)

// TestExposedRunKeepsOutputs checks the harness itself: exposing every node
// output must not change the model's own outputs, so the intermediate values
// the other tests compare against are the model's.
func TestExposedRunKeepsOutputs(t *testing.T) {
	rt := openRuntime(t)
	total := 0
	for _, src := range realSources() {
		fr := getFullRun(t, src)
		var outs []string
		for _, vi := range fr.proto.GetGraph().GetOutput() {
			outs = append(outs, vi.GetName())
		}
		sess, err := rt.NewSession(fr.bytes, fr.inputs, outs, src.options)
		if err != nil {
			t.Fatalf("%s: %v", src.name, err)
		}
		got, err := sess.Run(fr.feeds)
		sess.Close()
		if err != nil {
			t.Fatalf("%s: %v", src.name, err)
		}
		for i, name := range outs {
			want := fr.values[name]
			if want == nil {
				t.Errorf("%s: graph output %q was not exposed", src.name, name)
				continue
			}
			if msg := compareData(got[i], want); msg != "" {
				t.Errorf("%s: graph output %q: %s", src.name, name, msg)
			}
		}
		t.Logf("%-13s %4d node outputs exposed, %d graph outputs unchanged", src.name, len(fr.exposed), len(outs))
		total += len(fr.exposed)
	}
	t.Logf("total: %d node outputs exposed", total)
}
