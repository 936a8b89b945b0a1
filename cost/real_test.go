package cost

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/realmodel"
)

// TestRealModelsPhone prints every real model's whole-model latency on each
// phone processor's default config and checks that models with LSTM or If
// cannot use the NPU, so that their best processor is the CPU or the GPU.
func TestRealModelsPhone(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	a := NewAnalytic(p)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "model\tMFLOPs\tlayers\t%s\t\n", strings.Join(p.Names(), "\t"))
	for _, rm := range assets.RealModels() {
		_, m, lg := realmodel.Load(t, rm)
		control := false
		for _, n := range m.Nodes {
			switch n.Op {
			case "LSTM", "GRU", "If", "Loop":
				control = true
			}
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%d\t", rm.Name, float64(m.Totals().FLOPs)/1e6, len(lg.Layers))
		best, bestName := -1.0, ""
		for i := range p.Processors {
			d, ok := wholeOn(t, tw, a, lg, p.DefaultConfig(i))
			if !ok {
				continue
			}
			ms := float64(d) / 1e6
			if best < 0 || ms < best {
				best, bestName = ms, p.Processors[i].Name
			}
			fmt.Fprintf(tw, "%.3f ms\t", ms)
		}
		fmt.Fprintln(tw)
		if control {
			npu, _ := p.Find("npu")
			if _, err := a.Subgraph(lg, graph.Range(0, len(lg.Layers)), p.DefaultConfig(npu)); !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s has LSTM/GRU/If/Loop but runs whole on the NPU (%v)", rm.Name, err)
			}
			if !strings.HasPrefix(bestName, "cpu") && bestName != "gpu" {
				t.Errorf("%s: best processor %s, want a CPU or the GPU", rm.Name, bestName)
			}
		}
	}
	tw.Flush()
	t.Log("real models on the phone, whole model on each default config (- : unsupported)\n" + b.String())
}
