package zoo

import (
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// makeDivisible rounds v to a multiple of 8, never below 8 or more than 10%
// down (torchvision's _make_divisible).
func makeDivisible(v int64) int64 {
	const d = 8
	r := (v + d/2) / d * d
	if r < d {
		r = d
	}
	if float64(r) < 0.9*float64(v) {
		r += d
	}
	return r
}

// makeDivisibleF is torchvision's _make_divisible(v, 8) for a fractional
// v: rounded to the nearest multiple of 8, never more than 10% down.
func makeDivisibleF(v float64) int64 {
	const d = 8
	r := int64(v+d/2) / d * d
	if r < d {
		r = d
	}
	if float64(r) < 0.9*v {
		r += d
	}
	return r
}

// classifier is global average pooling, flatten and a fully connected layer.
func classifier(x T, classes int64) T {
	x.n.scope("classifier")
	return x.GAP().Flatten().Gemm(classes)
}

// mobileNetV2 follows torchvision's mobilenet_v2 (width 1.0).
func mobileNetV2(in graph.Shape) *graph.Model {
	n := newNet("mobilenet_v2")
	x := n.input("input", graph.Float32, in...)
	n.scope("features.0")
	x = x.Conv(32, 3, 2).BN().Relu6()
	settings := [][4]int64{ // expansion t, channels c, repeats n, stride s
		{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
		{6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
	}
	idx := 1
	for _, s := range settings {
		x, idx = n.invertedStage(x, s, 1, "features", idx)
	}
	n.scope("features.%d", idx)
	x = x.Conv(1280, 1, 1).BN().Relu6()
	n.output(classifier(x, 1000))
	return n.m
}

// invertedStage adds a MobileNetV2 stage s (expansion t, channels c,
// repeats n, stride s) of inverted residuals with the dilation, named
// prefix.idx, prefix.idx+1, ...; it returns the stage's output and the
// next index.
func (n *net) invertedStage(x T, s [4]int64, dilation int64, prefix string, idx int) (T, int) {
	for i := int64(0); i < s[2]; i++ {
		stride := int64(1)
		if i == 0 {
			stride = s[3]
		}
		n.scope("%s.%d", prefix, idx)
		idx++
		x = invertedResidual(x, s[0], s[1], stride, dilation)
	}
	return x, idx
}

// invertedResidual is MobileNetV2's block: a 1×1 expansion by t (none when
// t is 1), a 3×3 depthwise conv at stride and dilation, a 1×1 projection to
// out channels, and the residual where the shapes allow it.
func invertedResidual(x T, t, out, stride, dilation int64) T {
	in := x
	if t != 1 {
		x = x.Conv(in.Shape[1]*t, 1, 1).BN().Relu6()
	}
	x = x.DWConv(3, stride, dilation).BN().Relu6()
	x = x.Conv(out, 1, 1).BN()
	if stride == 1 && in.Shape[1] == out {
		x = in.Add(x)
	}
	return x
}

// bneck is one MobileNetV3 inverted-residual configuration.
type bneck struct {
	k, exp, out int64
	se          bool
	act         string
	stride      int64
	// dilated blocks replace their stride by dilation 2 when the backbone
	// is built for segmentation.
	dilated bool
}

var mobileNetV3LargeBlocks = []bneck{
	{3, 16, 16, false, "relu", 1, false},
	{3, 64, 24, false, "relu", 2, false},
	{3, 72, 24, false, "relu", 1, false},
	{5, 72, 40, true, "relu", 2, false},
	{5, 120, 40, true, "relu", 1, false},
	{5, 120, 40, true, "relu", 1, false},
	{3, 240, 80, false, "hswish", 2, false},
	{3, 200, 80, false, "hswish", 1, false},
	{3, 184, 80, false, "hswish", 1, false},
	{3, 184, 80, false, "hswish", 1, false},
	{3, 480, 112, true, "hswish", 1, false},
	{3, 672, 112, true, "hswish", 1, false},
	{5, 672, 160, true, "hswish", 2, true},
	{5, 960, 160, true, "hswish", 1, true},
	{5, 960, 160, true, "hswish", 1, true},
}

// squeezeExcite scales channels by a gate computed from their global
// average: pool, 1×1 conv to squeeze channels, act, 1×1 conv back, gate.
func squeezeExcite(x T, squeeze int64, act, gate string) T {
	c := x.Shape[1]
	s := x.GAP().
		ConvWith(conv{Out: squeeze, KH: 1, KW: 1, Bias: true}).Act(act).
		ConvWith(conv{Out: c, KH: 1, KW: 1, Bias: true})
	// A gate bias of 3 opens the gates of the exported random network
	// (sigmoid(3) ≈ 0.95), so that activations do not halve at every block.
	x.n.fill(s.Name+".bias", 3)
	return x.Mul(s.Act(gate))
}

// mobileNetV3Features builds torchvision's MobileNetV3-Large feature
// extractor (features.0 … features.16). With dilated, the last stage keeps
// stride 16 and dilates instead (the segmentation backbone). It returns the
// final features and the output of features.4 (stride 8, 40 channels).
func mobileNetV3Features(n *net, x T, dilated bool) (out, c2 T) {
	return mobileNetV3Trunk(n, x, mobileNetV3LargeBlocks, 960, dilated)
}

// mobileNetV3Trunk is MobileNetV3's features: stem, the blocks, and the
// last 1×1 conv to last channels.
func mobileNetV3Trunk(n *net, x T, blocks []bneck, last int64, dilated bool) (out, c2 T) {
	n.scope("features.0")
	x = x.Conv(16, 3, 2).BNEps(1e-3).HardSwish()
	for i, b := range blocks {
		n.scope("features.%d", i+1)
		in := x
		stride, dilation := b.stride, int64(1)
		if dilated && b.dilated {
			stride, dilation = 1, 2
		}
		if b.exp != in.Shape[1] {
			x = x.Conv(b.exp, 1, 1).BNEps(1e-3).Act(b.act)
		}
		x = x.DWConv(b.k, stride, dilation).BNEps(1e-3).Act(b.act)
		if b.se {
			x = squeezeExcite(x, makeDivisible(b.exp/4), "relu", "hsigmoid")
		}
		x = x.Conv(b.out, 1, 1).BNEps(1e-3)
		if b.stride == 1 && in.Shape[1] == b.out {
			x = in.Add(x)
		}
		if i+1 == 4 {
			c2 = x
		}
	}
	n.scope("features.%d", len(blocks)+1)
	x = x.Conv(last, 1, 1).BNEps(1e-3).HardSwish()
	return x, c2
}

// mobileNetV3Large follows torchvision's mobilenet_v3_large (width 1.0).
func mobileNetV3Large(in graph.Shape) *graph.Model {
	n := newNet("mobilenet_v3_large")
	x := n.input("input", graph.Float32, in...)
	x, _ = mobileNetV3Features(n, x, false)
	n.scope("classifier")
	x = x.GAP().Flatten().Gemm(1280).HardSwish().Gemm(1000)
	n.output(x)
	return n.m
}

// efficientNetB0 follows torchvision's efficientnet_b0.
func efficientNetB0(in graph.Shape) *graph.Model {
	return efficientNet("efficientnet_b0", in, 1.0, 1.0)
}

// efficientNetB4 follows torchvision's efficientnet_b4 (width 1.4, depth
// 1.8; 380×380).
func efficientNetB4(in graph.Shape) *graph.Model {
	return efficientNet("efficientnet_b4", in, 1.4, 1.8)
}

// efficientNet is torchvision's EfficientNet-B* with width and depth
// multipliers on B0's stages (_MBConvConfig.adjust_channels and
// adjust_depth).
func efficientNet(name string, in graph.Shape, width, depth float64) *graph.Model {
	ch := func(c int64) int64 { return makeDivisibleF(float64(c) * width) }
	n := newNet(name)
	x := n.input("input", graph.Float32, in...)
	n.scope("features.0")
	x = x.Conv(ch(32), 3, 2).BNEps(1e-3).SiLU()
	stages := [][5]int64{ // expansion, kernel, stride, out, repeats
		{1, 3, 1, 16, 1}, {6, 3, 2, 24, 2}, {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
		{6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1},
	}
	for si, s := range stages {
		s[3] = ch(s[3])
		s[4] = int64(math.Ceil(float64(s[4]) * depth))
		for i := int64(0); i < s[4]; i++ {
			n.scope("features.%d.%d", si+1, i)
			stride := int64(1)
			if i == 0 {
				stride = s[2]
			}
			in := x
			cin := in.Shape[1]
			if exp := cin * s[0]; exp != cin {
				x = x.Conv(exp, 1, 1).BNEps(1e-3).SiLU()
			}
			x = x.DWConv(s[1], stride, 1).BNEps(1e-3).SiLU()
			squeeze := cin / 4
			if squeeze < 1 {
				squeeze = 1
			}
			x = squeezeExcite(x, squeeze, "silu", "sigmoid")
			x = x.Conv(s[3], 1, 1).BNEps(1e-3)
			if stride == 1 && cin == s[3] {
				x = in.Add(x)
			}
		}
	}
	n.scope("features.8")
	x = x.Conv(4*ch(320), 1, 1).BNEps(1e-3).SiLU()
	n.output(classifier(x, 1000))
	return n.m
}

// resNet50 follows torchvision's resnet50 (v1.5: stride on the 3×3 conv).
func resNet50(in graph.Shape) *graph.Model { return resNet("resnet50", in, []int{3, 4, 6, 3}, true) }

// resNet101 follows torchvision's resnet101.
func resNet101(in graph.Shape) *graph.Model { return resNet("resnet101", in, []int{3, 4, 23, 3}, true) }

// resNet18 follows torchvision's resnet18 (basic blocks).
func resNet18(in graph.Shape) *graph.Model { return resNet("resnet18", in, []int{2, 2, 2, 2}, false) }

// resNet is torchvision's ResNet: bottleneck blocks (expansion 4, stride
// on the 3×3 conv) or basic blocks (two 3×3 convs).
func resNet(name string, in graph.Shape, stages []int, bottleneck bool) *graph.Model {
	n := newNet(name)
	x := n.input("input", graph.Float32, in...)
	n.scope("stem")
	x = x.Conv(64, 7, 2).BN().Relu().MaxPool(3, 2, 1)
	for li, blocks := range stages {
		width := int64(64) << li
		for bi := 0; bi < blocks; bi++ {
			n.scope("layer%d.%d", li+1, bi)
			stride := int64(1)
			if bi == 0 && li > 0 {
				stride = 2
			}
			in := x
			var y T
			out := width
			if bottleneck {
				out = 4 * width
				y = x.Conv(width, 1, 1).BN().Relu().
					Conv(width, 3, stride).BN().Relu().
					Conv(out, 1, 1).BN()
			} else {
				y = x.Conv(width, 3, stride).BN().Relu().Conv(width, 3, 1).BN()
			}
			if stride != 1 || in.Shape[1] != out {
				in = in.Conv(out, 1, stride).BN()
			}
			x = in.Add(y).Relu()
		}
	}
	n.output(classifier(x, 1000))
	return n.m
}

// basic is Inception's BasicConv2d: conv without bias, BN (eps 0.001), ReLU.
func basic(x T, out, kh, kw, stride, ph, pw int64) T {
	return x.ConvWith(conv{Out: out, KH: kh, KW: kw, Stride: stride, PadH: ph, PadW: pw}).BNEps(1e-3).Relu()
}

// inceptionV3 follows torchvision's inception_v3 in inference form: the
// auxiliary classifier, which runs only in training, is not built.
func inceptionV3(in graph.Shape) *graph.Model {
	n := newNet("inception_v3")
	x := n.input("input", graph.Float32, in...)
	n.scope("stem")
	x = basic(x, 32, 3, 3, 2, 0, 0)
	x = basic(x, 32, 3, 3, 1, 0, 0)
	x = basic(x, 64, 3, 3, 1, 1, 1)
	x = x.MaxPool(3, 2, 0)
	x = basic(x, 80, 1, 1, 1, 0, 0)
	x = basic(x, 192, 3, 3, 1, 0, 0)
	x = x.MaxPool(3, 2, 0)
	inceptionA := func(x T, pool int64) T {
		b1 := basic(x, 64, 1, 1, 1, 0, 0)
		b5 := basic(basic(x, 48, 1, 1, 1, 0, 0), 64, 5, 5, 1, 2, 2)
		b3 := basic(basic(basic(x, 64, 1, 1, 1, 0, 0), 96, 3, 3, 1, 1, 1), 96, 3, 3, 1, 1, 1)
		bp := basic(x.AvgPool(3, 1, 1), pool, 1, 1, 1, 0, 0)
		return b1.Concat(1, b5, b3, bp)
	}
	inceptionC := func(x T, c7 int64) T {
		b1 := basic(x, 192, 1, 1, 1, 0, 0)
		b7 := basic(x, c7, 1, 1, 1, 0, 0)
		b7 = basic(b7, c7, 1, 7, 1, 0, 3)
		b7 = basic(b7, 192, 7, 1, 1, 3, 0)
		bd := basic(x, c7, 1, 1, 1, 0, 0)
		bd = basic(bd, c7, 7, 1, 1, 3, 0)
		bd = basic(bd, c7, 1, 7, 1, 0, 3)
		bd = basic(bd, c7, 7, 1, 1, 3, 0)
		bd = basic(bd, 192, 1, 7, 1, 0, 3)
		bp := basic(x.AvgPool(3, 1, 1), 192, 1, 1, 1, 0, 0)
		return b1.Concat(1, b7, bd, bp)
	}
	inceptionE := func(x T) T {
		b1 := basic(x, 320, 1, 1, 1, 0, 0)
		b3 := basic(x, 384, 1, 1, 1, 0, 0)
		b3 = basic(b3, 384, 1, 3, 1, 0, 1).Concat(1, basic(b3, 384, 3, 1, 1, 1, 0))
		bd := basic(basic(x, 448, 1, 1, 1, 0, 0), 384, 3, 3, 1, 1, 1)
		bd = basic(bd, 384, 1, 3, 1, 0, 1).Concat(1, basic(bd, 384, 3, 1, 1, 1, 0))
		bp := basic(x.AvgPool(3, 1, 1), 192, 1, 1, 1, 0, 0)
		return b1.Concat(1, b3, bd, bp)
	}
	n.scope("Mixed_5b")
	x = inceptionA(x, 32)
	n.scope("Mixed_5c")
	x = inceptionA(x, 64)
	n.scope("Mixed_5d")
	x = inceptionA(x, 64)
	n.scope("Mixed_6a")
	{
		b3 := basic(x, 384, 3, 3, 2, 0, 0)
		bd := basic(basic(basic(x, 64, 1, 1, 1, 0, 0), 96, 3, 3, 1, 1, 1), 96, 3, 3, 2, 0, 0)
		x = b3.Concat(1, bd, x.MaxPool(3, 2, 0))
	}
	for i, c7 := range []int64{128, 160, 160, 192} {
		n.scope("Mixed_6%c", 'b'+i)
		x = inceptionC(x, c7)
	}
	n.scope("Mixed_7a")
	{
		b3 := basic(basic(x, 192, 1, 1, 1, 0, 0), 320, 3, 3, 2, 0, 0)
		b7 := basic(x, 192, 1, 1, 1, 0, 0)
		b7 = basic(b7, 192, 1, 7, 1, 0, 3)
		b7 = basic(b7, 192, 7, 1, 1, 3, 0)
		b7 = basic(b7, 192, 3, 3, 2, 0, 0)
		x = b3.Concat(1, b7, x.MaxPool(3, 2, 0))
	}
	n.scope("Mixed_7b")
	x = inceptionE(x)
	n.scope("Mixed_7c")
	x = inceptionE(x)
	n.output(classifier(x, 1000))
	return n.m
}

// deepLabV3MobileNetV3 follows torchvision's deeplabv3_mobilenet_v3_large
// at 520×520 (the resolution of its published GFLOPS): dilated backbone
// (output stride 16), ASPP with rates 12/24/36 and image pooling, the
// DeepLab head, and the FCN auxiliary head on features.4 (stride 8), which
// torchvision runs in eval mode too; both outputs upsampled bilinearly to
// the input size.
func deepLabV3MobileNetV3(in graph.Shape) *graph.Model {
	const classes = 21
	n := newNet("deeplabv3_mobilenet_v3_large")
	img := n.input("input", graph.Float32, in...)
	h, w := img.Shape[2], img.Shape[3]
	feat, c2 := mobileNetV3Features(n, img, true)
	n.scope("classifier.0")
	branches := []T{feat.Conv(256, 1, 1).BN().Relu()}
	for _, rate := range []int64{12, 24, 36} {
		branches = append(branches, feat.ConvWith(conv{Out: 256, KH: 3, KW: 3, Dilation: rate, PadH: rate, PadW: rate}).BN().Relu())
	}
	pool := feat.GAP().Conv(256, 1, 1).BN().Relu().Resize(feat.Shape[2], feat.Shape[3], "linear")
	branches = append(branches, pool)
	x := branches[0].Concat(1, branches[1:]...).Conv(256, 1, 1).BN().Relu()
	n.scope("classifier")
	x = x.Conv(256, 3, 1).BN().Relu().ConvWith(conv{Out: classes, KH: 1, KW: 1, Bias: true})
	out := x.Resize(h, w, "linear")
	n.scope("aux_classifier")
	aux := c2.Conv(c2.Shape[1]/4, 3, 1).BN().Relu().ConvWith(conv{Out: classes, KH: 1, KW: 1, Bias: true})
	aux = aux.Resize(h, w, "linear")
	n.output(out, aux)
	return n.m
}
