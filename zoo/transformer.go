package zoo

import (
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// attention is multi-head scaled dot-product attention over [1, seq, ·]
// inputs already projected to queries, keys and values of width heads·dh:
// softmax(q·kᵀ/√dh)·v, heads merged back to [1, seq, heads·dh].
func attention(q, k, v T, heads int64) T {
	seq, width := q.Shape[1], q.Shape[2]
	dh := width / heads
	split := func(t T) T { return t.Reshape(1, seq, heads, dh).Transpose(0, 2, 1, 3) }
	qh := split(q).MulScalar(float32(1 / math.Sqrt(float64(dh))))
	kt := k.Reshape(1, seq, heads, dh).Transpose(0, 2, 3, 1)
	p := qh.MatMul(kt).Softmax(-1)
	return p.MatMul(split(v)).Transpose(0, 2, 1, 3).Reshape(1, seq, width)
}

// deitTiny follows timm's deit_tiny_patch16_224 (ViT-Ti/16): 16×16 patch
// embedding to width 192, class token, learned position embedding, 12
// pre-norm blocks with 3 heads and MLP ratio 4 (exact GELU), final
// LayerNorm and a linear head on the class token.
func deitTiny(graph.Shape) *graph.Model { return vit("deit_tiny", 192, 12, 3) }

// vitB16 follows torchvision's vit_b_16: the same layout at width 768,
// 12 blocks of 12 heads.
func vitB16(graph.Shape) *graph.Model { return vit("vit_b_16", 768, 12, 12) }

// vit is a ViT/16 at 224×224 (LayerNorm eps 1e-6, MLP ratio 4).
func vit(name string, width int64, depth int, heads int64) *graph.Model {
	const (
		eps    = 1e-6
		patchs = 14 * 14
		seq    = patchs + 1
	)
	n := newNet(name)
	x := n.input("input", graph.Float32, 1, 3, 224, 224)
	n.scope("patch_embed")
	x = x.ConvWith(conv{Out: width, KH: 16, KW: 16, Stride: 16, Bias: true}).
		Reshape(1, width, patchs).Transpose(0, 2, 1)
	n.scope("embed")
	cls := T{n: n, Name: n.param("cls_token", 1, 1, width), Shape: graph.Shape{1, 1, width}, DType: graph.Float32}
	x = cls.Concat(1, x).AddParam("pos_embed", 1, seq, width)
	for i := 0; i < depth; i++ {
		n.scope("blocks.%d", i)
		h := x.LayerNorm(eps)
		qkv := h.Linear(3*width, true)
		q := qkv.Slice(2, 0, width)
		k := qkv.Slice(2, width, 2*width)
		v := qkv.Slice(2, 2*width, 3*width)
		x = x.Add(attention(q, k, v, heads).Linear(width, true))
		h = x.LayerNorm(eps).Linear(4*width, true).GELU().Linear(width, true)
		x = x.Add(h)
	}
	n.scope("head")
	x = x.LayerNorm(eps).Pick(1, 0).Gemm(1000)
	n.output(x)
	return n.m
}

// noNorm is MobileBERT's NoNorm: an element-wise affine x·γ + β.
func noNorm(x T) T {
	d := x.Shape[len(x.Shape)-1]
	n := x.n
	base := n.uniqueName("NoNorm")
	// Unit scale and zero shift (the exporter's random values would shrink
	// the signal 20-fold at each of the ~200 NoNorms).
	g := n.paramFilled(base+".weight", 1, d)
	b := n.paramFilled(base+".bias", 0, d)
	y := n.node("Mul", []string{x.Name, g}, nil, x.DType, x.Shape)
	return n.node("Add", []string{y.Name, b}, nil, x.DType, x.Shape)
}

// mobileBERT follows HuggingFace's MobileBertModel with the
// google/mobilebert-uncased configuration (Sun et al. 2020, Table 1): 24
// layers, hidden 512, intra-block bottleneck 128 with queries and keys from
// a shared bottleneck and values from the full hidden state, 4 heads, 4
// stacked feed-forward networks of width 512, NoNorm, ReLU; embeddings of
// width 128 widened by a trigram concatenation and a linear layer to 512.
// Input: token ids [1, 128]; output: the last hidden state [1, 128, 512]
// (no pooler: the configuration's classifier_activation is false).
func mobileBERT(graph.Shape) *graph.Model { return mobileBERTSeq("mobilebert", 128) }

// mobileBERT384 is the same encoder at sequence 384 (AI Hub's
// mobile_bert_uncased_google input, 1×384).
func mobileBERT384(graph.Shape) *graph.Model { return mobileBERTSeq("mobilebert_384", 384) }

// mobileBERTSeq builds MobileBERT for a fixed sequence length.
func mobileBERTSeq(name string, seq int64) *graph.Model {
	const (
		vocab  = 30522
		embed  = 128
		hidden = 512
		intra  = 128
		inter  = 512
		layers = 24
		heads  = 4
		ffns   = 4
	)
	n := newNet(name)
	ids := n.input("input_ids", graph.Int64, 1, seq)
	n.scope("embeddings")
	e := ids.Embedding("word_embeddings", vocab, embed)
	// Trigram input: [next token, this token, previous token] embeddings.
	next := e.Slice(1, 1, seq).Pad(0, 0, 0, 0, 1, 0)
	prev := e.Slice(1, 0, seq-1).Pad(0, 1, 0, 0, 0, 0)
	x := next.Concat(2, e, prev).Linear(hidden, true)
	// Position and token-type embeddings of a fixed-length, single-segment
	// input are constants: the rows for positions 0…seq-1 and for segment 0,
	// as torch.onnx's constant folding exports them.
	x = x.AddParam("position_embeddings", 1, seq, hidden).AddParam("token_type_embeddings", hidden)
	x = noNorm(x)
	for l := 0; l < layers; l++ {
		n.scope("encoder.layer.%d", l)
		layerIn := noNorm(x.Linear(intra, true))
		shared := noNorm(x.Linear(intra, true))
		q := shared.Linear(intra, true)
		k := shared.Linear(intra, true)
		v := x.Linear(intra, true)
		a := attention(q, k, v, heads)
		h := noNorm(a.Linear(intra, true).Add(layerIn))
		for f := 0; f < ffns-1; f++ {
			h = noNorm(h.Linear(inter, true).Relu().Linear(intra, true).Add(h))
		}
		h = noNorm(h.Linear(inter, true).Relu().Linear(intra, true).Add(h))
		x = noNorm(h.Linear(hidden, true).Add(x))
	}
	n.output(x)
	return n.m
}
