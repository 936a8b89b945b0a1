package zoo

import (
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// The networks of this file are the ones Qualcomm AI Hub publishes
// latencies of (shared/measurements/aihub-published.csv), at the input
// sizes AI Hub measures them at.

// yoloDWConv is ultralytics' DWConv: depthwise k×k, BN, SiLU.
func yoloDWConv(x T, k int64) T { return x.DWConv(k, 1, 1).BNEps(1e-3).SiLU() }

// yoloBottleneck is ultralytics' Bottleneck (two 3×3 convs, e 1.0) with
// its residual.
func yoloBottleneck(x T, c int64, shortcut bool) T {
	y := yoloConv(yoloConv(x, c, 3, 1), c, 3, 1)
	if shortcut && x.Shape[1] == c {
		y = x.Add(y)
	}
	return y
}

// c3k2 is YOLO11's C3k2: a C2f whose inner blocks are C3k (a C3 of two
// bottlenecks at half width) when c3k, else bottlenecks; hidden width
// out·e.
func c3k2(x T, out int64, repeats int, c3k bool, e float64) T {
	c := int64(float64(out) * e)
	y := yoloConv(x, 2*c, 1, 1)
	parts := []T{y.Slice(1, 0, c), y.Slice(1, c, 2*c)}
	last := parts[1]
	for i := 0; i < repeats; i++ {
		var b T
		if c3k {
			h := c / 2
			a := yoloConv(last, h, 1, 1)
			for j := 0; j < 2; j++ {
				a = yoloBottleneck(a, h, true)
			}
			b = yoloConv(a.Concat(1, yoloConv(last, h, 1, 1)), c, 1, 1)
		} else {
			b = yoloBottleneck(last, c, true)
		}
		parts = append(parts, b)
		last = b
	}
	return yoloConv(parts[0].Concat(1, parts[1:]...), out, 1, 1)
}

// c2psa is YOLO11's C2PSA: half the channels through n position-sensitive
// attention blocks (multi-head attention over the H·W positions with a
// depthwise positional conv, then a 2× feed-forward of 1×1 convs).
func c2psa(x T, repeats int) T {
	c1 := x.Shape[1]
	c := c1 / 2
	y := yoloConv(x, 2*c, 1, 1)
	a, b := y.Slice(1, 0, c), y.Slice(1, c, 2*c)
	heads := c / 64
	keyDim, headDim := int64(32), c/heads
	h, w := b.Shape[2], b.Shape[3]
	npos := h * w
	for i := 0; i < repeats; i++ {
		qkv := b.Conv(c+2*heads*keyDim, 1, 1).BNEps(1e-3).Reshape(1, heads, 2*keyDim+headDim, npos)
		q := qkv.Slice(2, 0, keyDim)
		k := qkv.Slice(2, keyDim, 2*keyDim)
		v := qkv.Slice(2, 2*keyDim, 2*keyDim+headDim)
		attn := q.Transpose(0, 1, 3, 2).MatMul(k).MulScalar(float32(1 / math.Sqrt(float64(keyDim)))).Softmax(-1)
		o := v.MatMul(attn.Transpose(0, 1, 3, 2)).Reshape(1, c, h, w)
		pe := v.Reshape(1, c, h, w).DWConv(3, 1, 1).BNEps(1e-3)
		b = b.Add(o.Add(pe).Conv(c, 1, 1).BNEps(1e-3))
		b = b.Add(yoloConv(b, 2*c, 1, 1).Conv(c, 1, 1).BNEps(1e-3))
	}
	return yoloConv(a.Concat(1, b), c1, 1, 1)
}

// yolo11n follows ultralytics' yolo11.yaml at scale n (depth 0.5, width
// 0.25, 80 classes): C3k2 blocks, SPPF, C2PSA, the PAN neck and the
// Detect head with YOLO11's light class branch and its exported decoding.
func yolo11n(in graph.Shape) *graph.Model {
	n := newNet("yolo11n")
	x := n.input("images", graph.Float32, in...)
	x0 := x
	n.scope("model.0")
	x = yoloConv(x, 16, 3, 2)
	n.scope("model.1")
	x = yoloConv(x, 32, 3, 2)
	n.scope("model.2")
	x = c3k2(x, 64, 1, false, 0.25)
	n.scope("model.3")
	x = yoloConv(x, 64, 3, 2)
	n.scope("model.4")
	p3 := c3k2(x, 128, 1, false, 0.25)
	n.scope("model.5")
	x = yoloConv(p3, 128, 3, 2)
	n.scope("model.6")
	p4 := c3k2(x, 128, 1, true, 0.5)
	n.scope("model.7")
	x = yoloConv(p4, 256, 3, 2)
	n.scope("model.8")
	x = c3k2(x, 256, 1, true, 0.5)
	n.scope("model.9")
	x = sppf(x, 256)
	n.scope("model.10")
	p5 := c2psa(x, 1)
	n.scope("model.11")
	x = p5.Resize(p5.Shape[2]*2, p5.Shape[3]*2, "nearest").Concat(1, p4)
	n.scope("model.13")
	h13 := c3k2(x, 128, 1, false, 0.5)
	n.scope("model.14")
	x = h13.Resize(h13.Shape[2]*2, h13.Shape[3]*2, "nearest").Concat(1, p3)
	n.scope("model.16")
	out3 := c3k2(x, 64, 1, false, 0.5)
	n.scope("model.17")
	x = yoloConv(out3, 64, 3, 2).Concat(1, h13)
	n.scope("model.19")
	out4 := c3k2(x, 128, 1, false, 0.5)
	n.scope("model.20")
	x = yoloConv(out4, 128, 3, 2).Concat(1, p5)
	n.scope("model.22")
	out5 := c3k2(x, 256, 1, true, 0.5)
	n.output(anchorFreeHead(n, x0, []T{out3, out4, out5}, 23, true))
	return n.m
}

// deepLabV3PlusMobileNet follows jfzhang95/pytorch-deeplab-xception's
// DeepLabV3+ with the MobileNetV2 backbone at output stride 16 (the last
// two stages dilated), 21 classes (VOC): ASPP (1×1, three 3×3 at
// dilations 6, 12, 18, image pooling; 256 channels), the decoder fusing
// the stride-4 features (48 channels) and two 3×3 convs, bilinear
// upsampling to the input. AI Hub measures it at 513×513.
func deepLabV3PlusMobileNet(in graph.Shape) *graph.Model {
	n := newNet("deeplabv3_plus_mobilenet")
	x := n.input("image", graph.Float32, in...)
	n.scope("backbone.features.0")
	x = x.Conv(32, 3, 2).BN().Relu6()
	settings := [][4]int64{
		{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
		{6, 96, 3, 1}, {6, 160, 3, 1}, {6, 320, 1, 1},
	}
	idx := 1
	var low T
	for si, s := range settings {
		dil := int64(1)
		if si >= 5 { // output stride 16: stride 1, dilation 2
			dil = 2
		}
		x, idx = n.invertedStage(x, s, dil, "backbone.features", idx)
		if si == 1 {
			low = x // stride 4, 24 channels
		}
	}
	n.scope("aspp")
	branches := []T{x.Conv(256, 1, 1).BN().Relu()}
	for _, d := range []int64{6, 12, 18} {
		branches = append(branches, x.ConvWith(conv{Out: 256, KH: 3, KW: 3, Dilation: d, PadH: -1, PadW: -1}).BN().Relu())
	}
	pool := x.GAP().Conv(256, 1, 1).BN().Relu().Resize(x.Shape[2], x.Shape[3], "linear")
	a := branches[0].Concat(1, append(branches[1:], pool)...).Conv(256, 1, 1).BN().Relu()
	n.scope("decoder")
	l := low.Conv(48, 1, 1).BN().Relu()
	y := a.Resize(l.Shape[2], l.Shape[3], "linear").Concat(1, l)
	y = y.Conv(256, 3, 1).BN().Relu().Conv(256, 3, 1).BN().Relu().ConvWith(conv{Out: 21, KH: 1, KW: 1, Bias: true})
	n.output(y.Resize(in[2], in[3], "linear"))
	return n.m
}

// ffnetBasic is FFNet's BasicBlock (two 3×3 convs, BN, ReLU; a 1×1
// projection when the shape changes).
func ffnetBasic(x T, out, stride int64) T {
	y := x.Conv(out, 3, stride).BN().Relu().Conv(out, 3, 1).BN()
	sc := x
	if stride != 1 || x.Shape[1] != out {
		sc = x.Conv(out, 1, stride).BN()
	}
	return sc.Add(y).Relu()
}

// ffnetSpec is one FFNet variant: the backbone's blocks, strides and
// channels, its stem, and the head's adapter and up-branch channels.
type ffnetSpec struct {
	blocks, strides, chans []int64
	narrow                 bool    // ResNetNarrow: a 3-conv stem, three stages
	preDown                bool    // a stride-2 5×5 depthwise Gaussian blur (GaussianConv2D) before the backbone
	adapter, up            []int64 // head type B: [64 128 128 256], [96 96 64 32]; C: [128 128 128 128], [128 16 16 16]
	mid                    int64   // the segmentation head's 3×3 conv width
	classK                 int64   // the classifier's kernel: 3 (task B), 1 (task C)
}

// ffnet follows Qualcomm's FFNet ("Simple and Efficient Architectures for
// Semantic Segmentation", Mehta et al. 2022; the mobile variants AI Hub
// publishes, as Qualcomm-AI-research/FFNet's models/ffnet_blocks.py and
// models/resnet.py build them): a slim ResNet backbone (ResNetS: two
// stride-2 3×3 stem convs; ResNetNarrow for the NS variants), the
// FFNetUpHead (a 1×1 adapter conv per scale; the up branch, from the
// coarsest scale, a 3×3 conv per scale to its output width and a 1×1 conv
// to the next finer scale's width, nearest-upsampled and added to it; the
// scales upsampled and concatenated) and the segmentation head (task B:
// 3×3 to 256, 3×3 to the classes; task C: 3×3 to 128, 1×1 to the
// classes), 19 Cityscapes classes, output at an eighth of the input.
func ffnet(name string, in graph.Shape, s ffnetSpec) *graph.Model {
	n := newNet(name)
	x := n.input("image", graph.Float32, in...)
	if s.preDown {
		// A reflect pad of one row on each side (a pad here), then the
		// blur without padding.
		n.scope("pre_down")
		x = x.Pad(0, 0, 1, 0, 0, 0, 1, 0)
		x = x.ConvWith(conv{Out: x.Shape[1], KH: 5, KW: 5, Stride: 2, Group: x.Shape[1]})
	}
	n.scope("backbone.stem")
	var feats []T
	chans := s.chans // of the stages
	if s.narrow {
		x = x.Conv(64, 3, 2).BN().Relu().Conv(64, 3, 2).BN().Relu()
		x = x.Conv(s.chans[0], 3, 1).BN().Relu()
		feats = append(feats, x)
		chans = s.chans[1:]
	} else {
		x = x.Conv(32, 3, 2).BN().Relu().Conv(64, 3, 2).BN().Relu()
	}
	for i, b := range s.blocks {
		for j := int64(0); j < b; j++ {
			n.scope("backbone.layer%d.%d", i+1, j)
			st := int64(1)
			if j == 0 {
				st = s.strides[i]
			}
			x = ffnetBasic(x, chans[i], st)
		}
		feats = append(feats, x)
	}
	n.scope("head.adapter")
	for i := range feats {
		feats[i] = feats[i].Conv(s.adapter[i], 1, 1).BN().Relu()
	}
	n.scope("head.up")
	outs := make([]T, len(feats))
	x = feats[len(feats)-1]
	for i := len(feats) - 1; i >= 0; i-- {
		outs[i] = x.Conv(s.up[i], 3, 1).BN().Relu()
		if i > 0 {
			f := feats[i-1]
			x = x.Conv(f.Shape[1], 1, 1).BN().Relu().Resize(f.Shape[2], f.Shape[3], "nearest").Add(f)
		}
	}
	n.scope("head.cat")
	h, w := outs[0].Shape[2], outs[0].Shape[3]
	y := outs[0]
	var rest []T
	for _, o := range outs[1:] {
		rest = append(rest, o.Resize(h, w, "nearest"))
	}
	y = y.Concat(1, rest...)
	n.scope("head.seg")
	y = y.Conv(s.mid, 3, 1).BN().Relu().ConvWith(conv{Out: 19, KH: s.classK, KW: s.classK, PadH: -1, PadW: -1, Bias: true})
	n.output(y)
	return n.m
}

var (
	ffnetHeadB = ffnetSpec{adapter: []int64{64, 128, 128, 256}, up: []int64{96, 96, 64, 32}, mid: 256, classK: 3}
	ffnetHeadC = ffnetSpec{adapter: []int64{128, 128, 128, 128}, up: []int64{128, 16, 16, 16}, mid: 128, classK: 1}
)

func ffnetS(head ffnetSpec, blocks []int64, dBBB bool) ffnetSpec {
	s := head
	s.blocks, s.chans = blocks, []int64{64, 128, 192, 320}
	s.strides = []int64{1, 2, 2, 2}
	if dBBB {
		s.strides = []int64{2, 2, 2, 2}
	}
	return s
}

// ffnet40S, ffnet54S, ffnet78S: the dBBB mobile variants at 2048×1024.
func ffnet40S(in graph.Shape) *graph.Model {
	return ffnet("ffnet_40s", in, ffnetS(ffnetHeadB, []int64{4, 5, 6, 4}, true))
}
func ffnet54S(in graph.Shape) *graph.Model {
	return ffnet("ffnet_54s", in, ffnetS(ffnetHeadB, []int64{5, 8, 8, 5}, true))
}
func ffnet78S(in graph.Shape) *graph.Model {
	return ffnet("ffnet_78s", in, ffnetS(ffnetHeadB, []int64{6, 12, 12, 8}, true))
}

// ffnet78SLowRes is AI Hub's low-resolution 78S (segmentation_ffnet78S_
// BCC_mobile_pre_down): the input (1024×512) blurred and halved first,
// then the 78S backbone without the extra stride, head and task C.
func ffnet78SLowRes(in graph.Shape) *graph.Model {
	s := ffnetS(ffnetHeadC, []int64{6, 12, 12, 8}, false)
	s.preDown = true
	return ffnet("ffnet_78s_lowres", in, s)
}

// ffnet122NSLowRes is ResNet-122NS (narrow: three stages of 16, 24 and 20
// blocks, channels 64, 64, 128, 256) with head type C at 1024×512, the
// input halved first (segmentation_ffnet122NS_CCC_mobile_pre_down).
func ffnet122NSLowRes(in graph.Shape) *graph.Model {
	s := ffnetHeadC
	s.preDown = true
	s.narrow, s.blocks, s.strides, s.chans = true, []int64{16, 24, 20}, []int64{2, 2, 2}, []int64{64, 64, 128, 256}
	return ffnet("ffnet_122ns_lowres", in, s)
}

// whisperTiny are Whisper tiny's dimensions (Radford et al. 2022;
// openai/whisper-tiny): width 384, 6 heads, 4 layers each side, 1500
// audio positions, vocabulary 51865; AI Hub's decoder caches 200 tokens.
const (
	whisperWidth  = 384
	whisperHeads  = 6
	whisperLayers = 4
	whisperAudio  = 1500
	whisperVocab  = 51865
	whisperCache  = 200
)

// whisperTinyEncoder is Whisper tiny's audio encoder on 30 s of 80-bin
// log-mel frames [1, 80, 3000]: two 3-wide convolutions (the second of
// stride 2) with GELU, sinusoidal positions, 4 pre-norm blocks (6 heads,
// MLP 1536, GELU), a final LayerNorm. The 1-D convolutions run as 1×3
// 2-D ones on [1, 80, 1, 3000], as converters lower them.
func whisperTinyEncoder(in graph.Shape) *graph.Model {
	n := newNet("whisper_tiny_encoder")
	x := n.input("input_features", graph.Float32, in...)
	n.scope("conv")
	x = x.Reshape(1, in[1], 1, in[2])
	x = x.ConvWith(conv{Out: whisperWidth, KH: 1, KW: 3, PadW: 1, Bias: true}).GELU()
	x = x.ConvWith(conv{Out: whisperWidth, KH: 1, KW: 3, Stride: 2, PadW: 1, Bias: true}).GELU()
	seq := x.Shape[3]
	x = x.Reshape(1, whisperWidth, seq).Transpose(0, 2, 1).AddParam("embed_positions", 1, seq, whisperWidth)
	for l := 0; l < whisperLayers; l++ {
		n.scope("encoder.layers.%d", l)
		h := x.LayerNorm(1e-5)
		a := attention(h.Linear(whisperWidth, true), h.Linear(whisperWidth, false), h.Linear(whisperWidth, true), whisperHeads)
		x = x.Add(a.Linear(whisperWidth, true))
		x = x.Add(x.LayerNorm(1e-5).Linear(4*whisperWidth, true).GELU().Linear(whisperWidth, true))
	}
	n.scope("encoder.layer_norm")
	n.output(x.LayerNorm(1e-5))
	return n.m
}

// whisperTinyDecoder is one step of Whisper tiny's text decoder as AI Hub
// exports it (HfWhisperDecoder): one token in, the self-attention keys and
// values of the 199 tokens before it and the cross-attention keys and
// values of the 1500 audio positions as inputs; 4 pre-norm blocks (self
// attention over the cache and the new token, cross attention, MLP 1536),
// the final LayerNorm and the logits over the vocabulary (tied to the
// token embedding); the updated caches out.
func whisperTinyDecoder(in graph.Shape) *graph.Model {
	const dh = whisperWidth / whisperHeads
	n := newNet("whisper_tiny_decoder")
	ids := n.input("input_ids", graph.Int64, in...)
	var caches []T
	for l := 0; l < whisperLayers; l++ {
		caches = append(caches,
			n.input(fmt.Sprintf("k_cache_self_%d_in", l), graph.Float32, 1, whisperHeads, whisperCache-1, dh),
			n.input(fmt.Sprintf("v_cache_self_%d_in", l), graph.Float32, 1, whisperHeads, whisperCache-1, dh),
			n.input(fmt.Sprintf("k_cache_cross_%d", l), graph.Float32, 1, whisperHeads, dh, whisperAudio),
			n.input(fmt.Sprintf("v_cache_cross_%d", l), graph.Float32, 1, whisperHeads, whisperAudio, dh))
	}
	n.scope("embed")
	x := ids.Embedding("embed_tokens", whisperVocab, whisperWidth).AddParam("embed_positions", 1, 1, whisperWidth)
	heads := func(t T) T { return t.Reshape(1, 1, whisperHeads, dh).Transpose(0, 2, 1, 3) }
	merge := func(t T) T { return t.Transpose(0, 2, 1, 3).Reshape(1, 1, whisperWidth) }
	scale := float32(1 / math.Sqrt(dh))
	var outs []T
	for l := 0; l < whisperLayers; l++ {
		n.scope("decoder.layers.%d", l)
		kc, vc, kx, vx := caches[4*l], caches[4*l+1], caches[4*l+2], caches[4*l+3]
		h := x.LayerNorm(1e-5)
		q := heads(h.Linear(whisperWidth, true)).MulScalar(scale)
		k := kc.Concat(2, heads(h.Linear(whisperWidth, false)))
		v := vc.Concat(2, heads(h.Linear(whisperWidth, true)))
		outs = append(outs, k.Slice(2, 1, whisperCache), v.Slice(2, 1, whisperCache))
		a := q.MatMul(k.Transpose(0, 1, 3, 2)).Softmax(-1).MatMul(v)
		x = x.Add(merge(a).Linear(whisperWidth, true))
		h = x.LayerNorm(1e-5)
		q = heads(h.Linear(whisperWidth, true)).MulScalar(scale)
		a = q.MatMul(kx).Softmax(-1).MatMul(vx)
		x = x.Add(merge(a).Linear(whisperWidth, true))
		x = x.Add(x.LayerNorm(1e-5).Linear(4*whisperWidth, true).GELU().Linear(whisperWidth, true))
	}
	n.scope("decoder.layer_norm")
	logits := x.LayerNorm(1e-5).Linear(whisperVocab, false)
	n.output(append([]T{logits}, outs...)...)
	return n.m
}

// blazeBlock is BlazeFace's block: a depthwise k×k conv and a 1×1 conv
// (both with bias), a residual (max-pooled when strided, zero-padded in
// channels when widening), ReLU.
func blazeBlock(x T, out, k, stride int64) T {
	y := x
	sc := x
	if stride == 2 {
		y = y.Pad(0, 0, 0, 0, 0, 0, k-2, k-2)
		sc = sc.MaxPool(2, 2, 0)
		y = y.ConvWith(conv{Out: x.Shape[1], KH: k, KW: k, Stride: 2, Group: x.Shape[1], Bias: true})
	} else {
		y = y.ConvWith(conv{Out: x.Shape[1], KH: k, KW: k, Group: x.Shape[1], PadH: -1, PadW: -1, Bias: true})
	}
	y = y.ConvWith(conv{Out: out, KH: 1, KW: 1, Bias: true})
	if out > x.Shape[1] {
		sc = sc.Pad(0, 0, 0, 0, 0, out-x.Shape[1], 0, 0)
	}
	return y.Add(sc).Relu()
}

// mediaPipeFaceDetector is MediaPipe's BlazeFace back-camera (full-range
// 256×256) detector as AI Hub ships it (hollance/BlazeFace-PyTorch's
// back model): a 5×5 stride-2 stem of 24 channels, BlazeBlocks to 16×16
// (96 channels) and 8×8, and the 896-anchor regressor (16 values) and
// classifier heads, reshaped and concatenated.
func mediaPipeFaceDetector(in graph.Shape) *graph.Model {
	n := newNet("mediapipe_face_detector")
	x := n.input("image", graph.Float32, in...)
	n.scope("backbone1")
	x = x.Pad(0, 0, 1, 1, 0, 0, 2, 2).ConvWith(conv{Out: 24, KH: 5, KW: 5, Stride: 2, Bias: true}).Relu()
	stages := []struct {
		out    int64
		repeat int
	}{{24, 7}, {24, 7}, {48, 7}, {96, 7}}
	for i, s := range stages {
		if i > 0 {
			x = blazeBlock(x, s.out, 3, 2)
		}
		for j := 0; j < s.repeat; j++ {
			x = blazeBlock(x, s.out, 3, 1)
		}
	}
	f16 := x
	n.scope("backbone2")
	x = blazeBlock(x, 96, 3, 2)
	for j := 0; j < 7; j++ {
		x = blazeBlock(x, 96, 3, 1)
	}
	f8 := x
	n.scope("heads")
	flat := func(t T, per int64) T {
		a := t.Shape[1] / per * t.Shape[2] * t.Shape[3]
		return t.Transpose(0, 2, 3, 1).Reshape(1, a, per)
	}
	c1 := flat(f16.ConvWith(conv{Out: 2, KH: 1, KW: 1, Bias: true}), 1)
	c2 := flat(f8.ConvWith(conv{Out: 6, KH: 1, KW: 1, Bias: true}), 1)
	r1 := flat(f16.ConvWith(conv{Out: 32, KH: 1, KW: 1, Bias: true}), 16)
	r2 := flat(f8.ConvWith(conv{Out: 96, KH: 1, KW: 1, Bias: true}), 16)
	n.output(r1.Concat(1, r2), c1.Concat(1, c2))
	return n.m
}

// mediaPipeFaceLandmark is MediaPipe's face-mesh landmark network at
// 192×192 (thepowerfuldeez/facemesh.pytorch layout): a 3×3 stride-2 stem
// of 16 channels, BlazeBlocks to 6×6 (16, 32, 64, 128, 128 channels,
// two per stage), then the 468×3 landmark and the face-flag branches
// (two BlazeBlocks each, a 3×3 conv to one position). The PReLU
// activations are costed as ReLU (both element-wise).
func mediaPipeFaceLandmark(in graph.Shape) *graph.Model {
	n := newNet("mediapipe_face_landmark")
	x := n.input("image", graph.Float32, in...)
	n.scope("backbone")
	x = x.Pad(0, 0, 0, 0, 0, 0, 1, 1).ConvWith(conv{Out: 16, KH: 3, KW: 3, Stride: 2, Bias: true}).Relu()
	for i, c := range []int64{16, 32, 64, 128, 128} {
		if i > 0 {
			x = blazeBlock(x, c, 3, 2)
		}
		x = blazeBlock(blazeBlock(x, c, 3, 1), c, 3, 1)
	}
	n.scope("coords")
	p := blazeBlock(blazeBlock(x, 128, 3, 2), 128, 3, 1)
	coords := p.ConvWith(conv{Out: 1404, KH: 3, KW: 3, Bias: true}).Reshape(1, 1404)
	n.scope("flag")
	f := blazeBlock(blazeBlock(x, 128, 3, 2), 128, 3, 1)
	flag := f.ConvWith(conv{Out: 1, KH: 3, KW: 3}).Sigmoid()
	n.output(coords, flag)
	return n.m
}

// easyOCRDetector is EasyOCR's CRAFT text detector (Baek et al. 2019):
// VGG16-BN to conv5_3, a pooled dilated fc6/fc7 (1024 channels), four
// U-net up-convolutions (1×1 then 3×3, BN, ReLU) fusing each VGG stage
// after bilinear upsampling, and the 5-conv head to the region and
// affinity maps at half the input. AI Hub measures it at 608×800.
func easyOCRDetector(in graph.Shape) *graph.Model {
	n := newNet("easyocr_detector")
	x := n.input("image", graph.Float32, in...)
	cbr := func(t T, c, k int64) T {
		return t.ConvWith(conv{Out: c, KH: k, KW: k, PadH: -1, PadW: -1, Bias: true}).BN().Relu()
	}
	n.scope("basenet")
	x = cbr(cbr(x, 64, 3), 64, 3).MaxPool(2, 2, 0)
	r2 := cbr(cbr(x, 128, 3), 128, 3) // relu2_2, 1/2
	x = cbr(cbr(r2.MaxPool(2, 2, 0), 256, 3), 256, 3)
	r3 := x // relu3_2, 1/4
	x = cbr(x, 256, 3).MaxPool(2, 2, 0)
	x = cbr(cbr(x, 512, 3), 512, 3)
	r4 := x // relu4_2, 1/8
	x = cbr(x, 512, 3).MaxPool(2, 2, 0)
	x = cbr(cbr(x, 512, 3), 512, 3)
	r5 := x // relu5_2, 1/16
	x = cbr(x, 512, 3)
	x = x.MaxPool(3, 1, 1).ConvWith(conv{Out: 1024, KH: 3, KW: 3, Dilation: 6, PadH: -1, PadW: -1, Bias: true})
	fc7 := x.ConvWith(conv{Out: 1024, KH: 1, KW: 1, Bias: true})
	up := func(t T, mid, out int64) T { return cbr(cbr(t, mid, 1), out, 3) }
	n.scope("upconv")
	y := up(fc7.Concat(1, r5), 512, 256)
	y = up(y.Resize(r4.Shape[2], r4.Shape[3], "linear").Concat(1, r4), 256, 128)
	y = up(y.Resize(r3.Shape[2], r3.Shape[3], "linear").Concat(1, r3), 128, 64)
	y = up(y.Resize(r2.Shape[2], r2.Shape[3], "linear").Concat(1, r2), 64, 32)
	n.scope("conv_cls")
	relu := func(t T, c, k int64) T {
		return t.ConvWith(conv{Out: c, KH: k, KW: k, PadH: -1, PadW: -1, Bias: true}).Relu()
	}
	y = relu(relu(relu(relu(y, 32, 3), 32, 3), 16, 3), 16, 1).ConvWith(conv{Out: 2, KH: 1, KW: 1, Bias: true})
	n.output(y.Transpose(0, 2, 3, 1))
	return n.m
}
