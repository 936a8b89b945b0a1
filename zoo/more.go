package zoo

import (
	"encoding/binary"
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// denseNet121 follows torchvision's densenet121: growth rate 32, blocks of
// 6, 12, 24 and 16 layers (BN-ReLU-1×1 conv to 4·32, BN-ReLU-3×3 conv to
// 32, concatenated), transitions halving channels and size, 1000 classes.
func denseNet121(in graph.Shape) *graph.Model {
	const growth, bnSize = 32, 4
	n := newNet("densenet121")
	x := n.input("input", graph.Float32, in...)
	n.scope("features.conv0")
	x = x.Conv(64, 7, 2).BN().Relu().MaxPool(3, 2, 1)
	for bi, layers := range []int{6, 12, 24, 16} {
		feats := x
		for li := 0; li < layers; li++ {
			n.scope("features.denseblock%d.denselayer%d", bi+1, li+1)
			y := feats.BN().Relu().Conv(bnSize*growth, 1, 1).BN().Relu().Conv(growth, 3, 1)
			feats = feats.Concat(1, y)
		}
		x = feats
		if bi < 3 {
			n.scope("features.transition%d", bi+1)
			x = x.BN().Relu().Conv(x.Shape[1]/2, 1, 1).AvgPool(2, 2, 0)
		}
	}
	n.scope("features.norm5")
	x = x.BN().Relu()
	n.output(classifier(x, 1000))
	return n.m
}

// squeezeNet11 follows torchvision's squeezenet1_1: Fire modules (1×1
// squeeze, then 1×1 and 3×3 expands concatenated, all with bias and ReLU),
// ceil-mode max pools, and a 1×1 conv classifier averaged globally.
func squeezeNet11(in graph.Shape) *graph.Model {
	n := newNet("squeezenet1_1")
	x := n.input("input", graph.Float32, in...)
	fire := func(x T, sq, e1, e3 int64) T {
		s := x.ConvWith(conv{Out: sq, KH: 1, KW: 1, Bias: true, HeInit: true}).Relu()
		a := s.ConvWith(conv{Out: e1, KH: 1, KW: 1, Bias: true, HeInit: true}).Relu()
		b := s.ConvWith(conv{Out: e3, KH: 3, KW: 3, PadH: 1, PadW: 1, Bias: true, HeInit: true}).Relu()
		return a.Concat(1, b)
	}
	n.scope("features.0")
	x = x.ConvWith(conv{Out: 64, KH: 3, KW: 3, Stride: 2, Bias: true, HeInit: true}).Relu().MaxPoolCeil(3, 2)
	for i, f := range [][3]int64{{16, 64, 64}, {16, 64, 64}, {0}, {32, 128, 128}, {32, 128, 128}, {0},
		{48, 192, 192}, {48, 192, 192}, {64, 256, 256}, {64, 256, 256}} {
		n.scope("features.%d", i+3)
		if f[0] == 0 {
			x = x.MaxPoolCeil(3, 2)
			continue
		}
		x = fire(x, f[0], f[1], f[2])
	}
	n.scope("classifier")
	x = x.ConvWith(conv{Out: 1000, KH: 1, KW: 1, Bias: true, HeInit: true}).Relu().GAP().Flatten()
	n.output(x)
	return n.m
}

// shuffleNetV2 follows torchvision's shufflenet_v2_x1_0: stages of 4, 8
// and 4 units at 116, 232 and 464 channels; a unit splits its channels
// (stride 1) or runs two branches (stride 2), concatenates and shuffles
// the channels in two groups.
func shuffleNetV2(in graph.Shape) *graph.Model {
	n := newNet("shufflenet_v2_x1_0")
	x := n.input("input", graph.Float32, in...)
	n.scope("conv1")
	x = x.Conv(24, 3, 2).BN().Relu().MaxPool(3, 2, 1)
	shuffle := func(t T) T {
		b, c, h, w := t.Shape[0], t.Shape[1], t.Shape[2], t.Shape[3]
		return t.Reshape(b, 2, c/2, h, w).Transpose(0, 2, 1, 3, 4).Reshape(b, c, h, w)
	}
	for si, st := range [][2]int64{{4, 116}, {8, 232}, {4, 464}} {
		out := st[1]
		half := out / 2
		for u := int64(0); u < st[0]; u++ {
			n.scope("stage%d.%d", si+2, u)
			if u == 0 {
				b1 := x.DWConv(3, 2, 1).BN().Conv(half, 1, 1).BN().Relu()
				b2 := x.Conv(half, 1, 1).BN().Relu().DWConv(3, 2, 1).BN().Conv(half, 1, 1).BN().Relu()
				x = shuffle(b1.Concat(1, b2))
				continue
			}
			c := x.Shape[1]
			x1, x2 := x.Slice(1, 0, c/2), x.Slice(1, c/2, c)
			b2 := x2.Conv(half, 1, 1).BN().Relu().DWConv(3, 1, 1).BN().Conv(half, 1, 1).BN().Relu()
			x = shuffle(x1.Concat(1, b2))
		}
	}
	n.scope("conv5")
	x = x.Conv(1024, 1, 1).BN().Relu()
	n.scope("fc")
	n.output(x.GAP().Flatten().Gemm(1000))
	return n.m
}

var mobileNetV3SmallBlocks = []bneck{
	{3, 16, 16, true, "relu", 2, false},
	{3, 72, 24, false, "relu", 2, false},
	{3, 88, 24, false, "relu", 1, false},
	{5, 96, 40, true, "hswish", 2, false},
	{5, 240, 40, true, "hswish", 1, false},
	{5, 240, 40, true, "hswish", 1, false},
	{5, 120, 48, true, "hswish", 1, false},
	{5, 144, 48, true, "hswish", 1, false},
	{5, 288, 96, true, "hswish", 2, true},
	{5, 576, 96, true, "hswish", 1, true},
	{5, 576, 96, true, "hswish", 1, true},
}

// mobileNetV3Small follows torchvision's mobilenet_v3_small (width 1.0).
func mobileNetV3Small(in graph.Shape) *graph.Model {
	n := newNet("mobilenet_v3_small")
	x := n.input("input", graph.Float32, in...)
	x, _ = mobileNetV3Trunk(n, x, mobileNetV3SmallBlocks, 576, false)
	n.scope("classifier")
	n.output(x.GAP().Flatten().Gemm(1024).HardSwish().Gemm(1000))
	return n.m
}

// yoloV8n follows ultralytics' yolov8.yaml at scale n (depth 0.33, width
// 0.25, 80 classes): C2f blocks, SPPF, a PAN neck and the anchor-free
// Detect head with its exported decoding (DFL over 16 bins, distances to
// boxes, sigmoid scores), giving [1, 84, anchors].
func yoloV8n(in graph.Shape) *graph.Model {
	n := newNet("yolov8n")
	x := n.input("images", graph.Float32, in...)
	x0 := x
	c2f := func(x T, out int64, repeats int, shortcut bool) T {
		c := out / 2
		y := yoloConv(x, 2*c, 1, 1)
		parts := []T{y.Slice(1, 0, c), y.Slice(1, c, 2*c)}
		last := parts[1]
		for i := 0; i < repeats; i++ {
			b := yoloConv(yoloConv(last, c, 3, 1), c, 3, 1)
			if shortcut {
				b = last.Add(b)
			}
			parts = append(parts, b)
			last = b
		}
		return yoloConv(parts[0].Concat(1, parts[1:]...), out, 1, 1)
	}
	n.scope("model.0")
	x = yoloConv(x, 16, 3, 2)
	n.scope("model.1")
	x = yoloConv(x, 32, 3, 2)
	n.scope("model.2")
	x = c2f(x, 32, 1, true)
	n.scope("model.3")
	x = yoloConv(x, 64, 3, 2)
	n.scope("model.4")
	p3 := c2f(x, 64, 2, true)
	n.scope("model.5")
	x = yoloConv(p3, 128, 3, 2)
	n.scope("model.6")
	p4 := c2f(x, 128, 2, true)
	n.scope("model.7")
	x = yoloConv(p4, 256, 3, 2)
	n.scope("model.8")
	x = c2f(x, 256, 1, true)
	n.scope("model.9")
	p5 := sppf(x, 256)
	n.scope("model.10")
	x = p5.Resize(p5.Shape[2]*2, p5.Shape[3]*2, "nearest").Concat(1, p4)
	n.scope("model.12")
	h12 := c2f(x, 128, 1, false)
	n.scope("model.13")
	x = h12.Resize(h12.Shape[2]*2, h12.Shape[3]*2, "nearest").Concat(1, p3)
	n.scope("model.15")
	out3 := c2f(x, 64, 1, false)
	n.scope("model.16")
	x = yoloConv(out3, 64, 3, 2).Concat(1, h12)
	n.scope("model.18")
	out4 := c2f(x, 128, 1, false)
	n.scope("model.19")
	x = yoloConv(out4, 128, 3, 2).Concat(1, p5)
	n.scope("model.21")
	out5 := c2f(x, 256, 1, false)

	n.output(anchorFreeHead(n, x0, []T{out3, out4, out5}, 22, false))
	return n.m
}

// anchorFreeHead is ultralytics' Detect head (YOLOv8, YOLO11) on three
// levels, module index idx, with its exported decoding: per level a box
// branch (two 3×3 convs, 1×1 to 4×16 bins) and a class branch (two 3×3
// convs for YOLOv8; YOLO11's light one: depthwise 3×3 then 1×1, twice),
// DFL over the bins, distances to boxes, sigmoid scores: [1, 84, anchors].
func anchorFreeHead(n *net, x0 T, feats []T, idx int, light bool) T {
	const classes, regMax = 80, 16
	out3 := feats[0]
	c2 := max(16, out3.Shape[1]/4, 4*regMax)
	c3 := max(out3.Shape[1], min(classes, 100))
	var boxes, scores []T
	var anchors, strides []float32
	for i, f := range feats {
		n.scope("model.%d.cv2.%d", idx, i)
		b := yoloConv(yoloConv(f, c2, 3, 1), c2, 3, 1).ConvWith(conv{Out: 4 * regMax, KH: 1, KW: 1, Bias: true})
		n.scope("model.%d.cv3.%d", idx, i)
		var s T
		if light {
			s = yoloConv(yoloDWConv(f, 3), c3, 1, 1)
			s = yoloConv(yoloDWConv(s, 3), c3, 1, 1)
		} else {
			s = yoloConv(yoloConv(f, c3, 3, 1), c3, 3, 1)
		}
		s = s.ConvWith(conv{Out: classes, KH: 1, KW: 1, Bias: true})
		h, w := f.Shape[2], f.Shape[3]
		boxes = append(boxes, b.Reshape(1, 4*regMax, h*w))
		scores = append(scores, s.Reshape(1, classes, h*w))
		stride := float32(x0.Shape[2] / h)
		for j := int64(0); j < h; j++ {
			for k := int64(0); k < w; k++ {
				anchors = append(anchors, float32(k)+0.5, float32(j)+0.5)
				strides = append(strides, stride)
			}
		}
	}
	n.scope("model.%d.dfl", idx)
	a := int64(len(strides))
	box := boxes[0].Concat(2, boxes[1:]...).Reshape(1, 4, regMax, a).Transpose(0, 2, 1, 3).Softmax(1)
	// DFL: a fixed 1×1 conv with weights 0..15 takes each side's expected bin.
	dist := box.ConvWith(conv{Out: 1, KH: 1, KW: 1})
	bins := make([]byte, 4*regMax)
	for i := range regMax {
		binary.LittleEndian.PutUint32(bins[4*i:], math.Float32bits(float32(i)))
	}
	n.m.Tensors[n.m.Nodes[len(n.m.Nodes)-1].Inputs[1]].Data.Raw = bins
	dist = dist.Reshape(1, 4, a)
	n.scope("model.%d", idx)
	grid := make([]float32, 0, 2*a)
	for i := int64(0); i < a; i++ {
		grid = append(grid, anchors[2*i])
	}
	for i := int64(0); i < a; i++ {
		grid = append(grid, anchors[2*i+1])
	}
	lt, rb := dist.Slice(1, 0, 2), dist.Slice(1, 2, 4)
	x1y1 := lt.MulScalar(-1).AddConst(grid, 1, 2, a)
	x2y2 := rb.AddConst(grid, 1, 2, a)
	xy := x1y1.Add(x2y2).MulScalar(0.5)
	wh := x2y2.Sub(x1y1)
	dbox := xy.Concat(1, wh).MulConst(strides, 1, 1, a)
	cls := scores[0].Concat(2, scores[1:]...).Sigmoid()
	return dbox.Concat(1, cls)
}
