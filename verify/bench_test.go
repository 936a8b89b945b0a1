package verify

import (
	"os"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
)

// BenchmarkRunRealModels reports the latency (ns/op) of one ONNX Runtime run
// of each real model at its typical input shapes, on one intra-op thread.
func BenchmarkRunRealModels(b *testing.B) {
	rt := openRuntime(b)
	for _, src := range realSources() {
		b.Run(src.name, func(b *testing.B) {
			data, err := os.ReadFile(assets.Require(b, assets.ModelPath(src.file)))
			if err != nil {
				b.Fatal(err)
			}
			mp := &onnxpb.ModelProto{}
			if err := proto.Unmarshal(data, mp); err != nil {
				b.Fatal(err)
			}
			names, feeds, err := makeFeeds(mp, src)
			if err != nil {
				b.Fatal(err)
			}
			var outs []string
			for _, vi := range mp.GetGraph().GetOutput() {
				outs = append(outs, vi.GetName())
			}
			sess, err := rt.NewSession(data, names, outs, sessionOptions)
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			if _, err := sess.Run(feeds); err != nil { // warm-up
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := sess.Run(feeds); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
