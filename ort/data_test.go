package ort

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

func TestRandomData(t *testing.T) {
	tests := []struct {
		dt    graph.DType
		shape graph.Shape
		check func(raw []byte, i int) bool
	}{
		{graph.Float32, graph.Shape{4, 5}, func(raw []byte, i int) bool {
			f := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			return f >= -1 && f < 1
		}},
		{graph.Float64, graph.Shape{7}, func(raw []byte, i int) bool {
			f := math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			return f >= -1 && f < 1
		}},
		{graph.Float16, graph.Shape{3, 3}, func(raw []byte, i int) bool {
			f := graph.Float16Value(binary.LittleEndian.Uint16(raw[2*i:]))
			return f >= -1 && f <= 1
		}},
		{graph.Int64, graph.Shape{10}, func(raw []byte, i int) bool { return binary.LittleEndian.Uint64(raw[8*i:]) < 4 }},
		{graph.Int32, graph.Shape{10}, func(raw []byte, i int) bool { return binary.LittleEndian.Uint32(raw[4*i:]) < 4 }},
		{graph.Int8, graph.Shape{10}, func(raw []byte, i int) bool { return raw[i] < 4 }},
		{graph.Uint16, graph.Shape{10}, func(raw []byte, i int) bool { return binary.LittleEndian.Uint16(raw[2*i:]) < 4 }},
		{graph.Bool, graph.Shape{10}, func(raw []byte, i int) bool { return raw[i] <= 1 }},
		{graph.Int64, graph.Shape{}, func(raw []byte, i int) bool { return binary.LittleEndian.Uint64(raw) < 4 }},
	}
	for _, tt := range tests {
		t.Run(tt.dt.String()+"_"+tt.shape.String(), func(t *testing.T) {
			d := RandomData(tt.dt, tt.shape, rand.New(rand.NewSource(7)))
			n, _ := tt.shape.Elements()
			if d.DType != tt.dt || !d.Dims.Equal(tt.shape) || len(d.Raw) != int(n)*tt.dt.Size() {
				t.Fatalf("got %s %s with %d bytes", d.DType, d.Dims, len(d.Raw))
			}
			for i := 0; i < int(n); i++ {
				if !tt.check(d.Raw, i) {
					t.Errorf("element %d out of range: % x", i, d.Raw)
				}
			}
			again := RandomData(tt.dt, tt.shape, rand.New(rand.NewSource(7)))
			if !bytes.Equal(d.Raw, again.Raw) {
				t.Error("same seed gave different values")
			}
		})
	}
	if d := RandomData(graph.Float32, graph.Shape{1024}, rand.New(rand.NewSource(1))); bytes.Equal(d.Raw, make([]byte, len(d.Raw))) {
		t.Error("random floats are all zero")
	}
}
