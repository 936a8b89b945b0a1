package onnx

import (
	"os"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
)

// BenchmarkDecode decodes and infers each fetched real model.
func BenchmarkDecode(b *testing.B) {
	for _, rm := range assets.RealModels() {
		data, err := os.ReadFile(assets.ModelPath(rm.File))
		if err != nil {
			continue
		}
		opt := Options{Inputs: rm.Shapes()}
		b.Run(rm.Name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				if _, err := Decode(data, rm.File, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExportSubgraph exports the whole of each real model as one
// layer set.
func BenchmarkExportSubgraph(b *testing.B) {
	for _, rm := range assets.RealModels() {
		m, err := Load(assets.ModelPath(rm.File), Options{Inputs: rm.Shapes()})
		if err != nil {
			continue
		}
		lg, err := graph.BuildLayers(m)
		if err != nil {
			b.Fatal(err)
		}
		set := graph.Range(0, len(lg.Layers))
		b.Run(rm.Name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := ExportSubgraph(lg, set); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
