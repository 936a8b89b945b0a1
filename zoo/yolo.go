package zoo

import (
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// yoloConv is ultralytics' Conv: conv without bias, BN (eps 0.001), SiLU.
func yoloConv(x T, out, k, stride int64) T {
	return x.Conv(out, k, stride).BNEps(1e-3).SiLU()
}

// c3 is ultralytics' C3 block: two 1×1 branches of half width, one through
// n bottlenecks (1×1 then 3×3, with a residual when shortcut), concatenated
// and fused by a 1×1 conv.
func c3(x T, out int64, repeats int, shortcut bool) T {
	hidden := out / 2
	a := yoloConv(x, hidden, 1, 1)
	for i := 0; i < repeats; i++ {
		y := yoloConv(yoloConv(a, hidden, 1, 1), hidden, 3, 1)
		if shortcut {
			y = a.Add(y)
		}
		a = y
	}
	b := yoloConv(x, hidden, 1, 1)
	return yoloConv(a.Concat(1, b), out, 1, 1)
}

// sppf is ultralytics' SPPF: 1×1 conv, three chained 5×5 max pools, concat
// of all four, 1×1 conv.
func sppf(x T, out int64) T {
	a := yoloConv(x, x.Shape[1]/2, 1, 1)
	p1 := a.MaxPool(5, 1, 2)
	p2 := p1.MaxPool(5, 1, 2)
	p3 := p2.MaxPool(5, 1, 2)
	return yoloConv(a.Concat(1, p1, p2, p3), out, 1, 1)
}

// yoloV5s follows ultralytics' yolov5s.yaml (v6.0 and later: 6×6 stem conv,
// SPPF) at 640×640 with 80 classes: depth multiple 0.33, width multiple
// 0.5. The Detect head includes the decoding that ultralytics exports:
// sigmoid, grid offsets and anchor scaling, giving boxes [1, 25200, 85].
func yoloV5s(in graph.Shape) *graph.Model { return yoloV5("yolov5s", in, 0.33, 0.50) }

// yoloV5m is ultralytics' yolov5m.yaml: depth multiple 0.67, width 0.75.
func yoloV5m(in graph.Shape) *graph.Model { return yoloV5("yolov5m", in, 0.67, 0.75) }

// yoloV5 builds yolov5*.yaml with depth and width multiples (parse_model:
// repeats max(round(n·depth), 1), channels ceil(c·width/8)·8).
func yoloV5(name string, in graph.Shape, depth, width float64) *graph.Model {
	const classes = 80
	ch := func(c int64) int64 { return int64(math.Ceil(float64(c)*width/8)) * 8 }
	rep := func(r int) int { return max(int(math.Round(float64(r)*depth)), 1) }
	n := newNet(name)
	x := n.input("images", graph.Float32, in...)
	x0 := x
	n.scope("model.0")
	x = x.ConvWith(conv{Out: ch(64), KH: 6, KW: 6, Stride: 2, PadH: 2, PadW: 2}).BNEps(1e-3).SiLU()
	n.scope("model.1")
	x = yoloConv(x, ch(128), 3, 2)
	n.scope("model.2")
	x = c3(x, ch(128), rep(3), true)
	n.scope("model.3")
	x = yoloConv(x, ch(256), 3, 2)
	n.scope("model.4")
	p3 := c3(x, ch(256), rep(6), true)
	n.scope("model.5")
	x = yoloConv(p3, ch(512), 3, 2)
	n.scope("model.6")
	p4 := c3(x, ch(512), rep(9), true)
	n.scope("model.7")
	x = yoloConv(p4, ch(1024), 3, 2)
	n.scope("model.8")
	x = c3(x, ch(1024), rep(3), true)
	n.scope("model.9")
	x = sppf(x, ch(1024))

	n.scope("model.10")
	h10 := yoloConv(x, ch(512), 1, 1)
	n.scope("model.11")
	x = h10.Resize(h10.Shape[2]*2, h10.Shape[3]*2, "nearest").Concat(1, p4)
	n.scope("model.13")
	x = c3(x, ch(512), rep(3), false)
	n.scope("model.14")
	h14 := yoloConv(x, ch(256), 1, 1)
	n.scope("model.15")
	x = h14.Resize(h14.Shape[2]*2, h14.Shape[3]*2, "nearest").Concat(1, p3)
	n.scope("model.17")
	out3 := c3(x, ch(256), rep(3), false)
	n.scope("model.18")
	x = yoloConv(out3, ch(256), 3, 2).Concat(1, h14)
	n.scope("model.20")
	out4 := c3(x, ch(512), rep(3), false)
	n.scope("model.21")
	x = yoloConv(out4, ch(512), 3, 2).Concat(1, h10)
	n.scope("model.23")
	out5 := c3(x, ch(1024), rep(3), false)

	anchors := [3][6]float32{
		{10, 13, 16, 30, 33, 23},
		{30, 61, 62, 45, 59, 119},
		{116, 90, 156, 198, 373, 326},
	}
	var levels []T
	for i, f := range []T{out3, out4, out5} {
		n.scope("model.24.m.%d", i)
		levels = append(levels, detectLevel(f, classes, x0.Shape[2]/f.Shape[2], anchors[i]))
	}
	n.scope("model.24")
	n.output(levels[0].Concat(1, levels[1:]...))
	return n.m
}

// detectLevel is one scale of YOLOv5's Detect head as exported: a 1×1 conv
// to 3 anchors × (5 + classes), reshaped to [1, 3, ny, nx, no], sigmoid,
// xy = (2σ + grid − 0.5)·stride, wh = (2σ)²·anchor, flattened to
// [1, 3·ny·nx, no].
func detectLevel(f T, classes, stride int64, anchors [6]float32) T {
	const na = 3
	no := classes + 5
	ny, nx := f.Shape[2], f.Shape[3]
	y := f.ConvWith(conv{Out: na * no, KH: 1, KW: 1, Bias: true}).
		Reshape(1, na, no, ny, nx).Transpose(0, 1, 3, 4, 2).Sigmoid()
	grid := make([]float32, 0, na*ny*nx*2)
	anchorGrid := make([]float32, 0, na*ny*nx*2)
	for a := 0; a < na; a++ {
		for j := int64(0); j < ny; j++ {
			for i := int64(0); i < nx; i++ {
				grid = append(grid, float32(i)-0.5, float32(j)-0.5)
				anchorGrid = append(anchorGrid, anchors[2*a], anchors[2*a+1])
			}
		}
	}
	xy := y.Slice(4, 0, 2).MulScalar(2).AddConst(grid, 1, na, ny, nx, 2).MulScalar(float32(stride))
	wh := y.Slice(4, 2, 4).MulScalar(2)
	wh = wh.Mul(wh).MulConst(anchorGrid, 1, na, ny, nx, 2)
	conf := y.Slice(4, 4, no)
	return xy.Concat(4, wh, conf).Reshape(1, na*ny*nx, no)
}
