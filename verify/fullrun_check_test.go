package verify

import (
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
)

// TestExposedRunKeepsOutputs checks the harness itself: exposing every node
// output must not change the model's own outputs, so the intermediate values
// the other tests compare against are the model's.
func TestExposedRunKeepsOutputs(t *testing.T) {
	rt := openRuntime(t)
	total := 0
	for _, rm := range assets.RealModels() {
		fr := getFullRun(t, rm)
		var outs []string
		for _, vi := range fr.proto.GetGraph().GetOutput() {
			outs = append(outs, vi.GetName())
		}
		sess, err := rt.NewSession(fr.bytes, fr.inputs, outs, sessionOptions)
		if err != nil {
			t.Fatalf("%s: %v", rm.Name, err)
		}
		got, err := sess.Run(fr.feeds)
		sess.Close()
		if err != nil {
			t.Fatalf("%s: %v", rm.Name, err)
		}
		for i, name := range outs {
			want := fr.values[name]
			if want == nil {
				t.Errorf("%s: graph output %q was not exposed", rm.Name, name)
				continue
			}
			if msg := compareData(got[i], want); msg != "" {
				t.Errorf("%s: graph output %q: %s", rm.Name, name, msg)
			}
		}
		t.Logf("%-13s %4d node outputs exposed, %d graph outputs unchanged", rm.Name, len(fr.exposed), len(outs))
		total += len(fr.exposed)
	}
	t.Logf("total: %d node outputs exposed", total)
}
