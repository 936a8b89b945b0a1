package graph

// Work is what one node (or a set of nodes) computes and moves.
//
// Conventions (see doc.go): MACs count multiply-accumulates of Conv,
// ConvTranspose, Gemm, MatMul and their quantized and recurrent relatives
// (Conv: N·Cout·Hout·Wout·(Cin/group)·Kh·Kw; Gemm/MatMul: output elements × K);
// FLOPs count every floating-point (or integer arithmetic) operation, with a
// MAC counted as 2 FLOPs, so FLOPs ≥ 2·MACs for MAC operators; other operators
// count FLOPs only (element-wise ops one per output element, reductions one
// per input element, and so on).
type Work struct {
	MACs  int64
	FLOPs int64
	// ActBytesIn are bytes of activation (non-constant) inputs read.
	ActBytesIn int64
	// WeightBytes are bytes of constant inputs (weights, biases) read.
	WeightBytes int64
	// BytesOut are bytes of outputs written.
	BytesOut int64
	// Params are elements of constant inputs that are weights.
	Params int64
	// DType is the node's main compute type (its first float or integer input).
	DType DType
}

// Add returns the element-wise sum; DType is kept from w unless it is Undefined.
func (w Work) Add(o Work) Work {
	d := w.DType
	if d == Undefined {
		d = o.DType
	}
	return Work{
		MACs: w.MACs + o.MACs, FLOPs: w.FLOPs + o.FLOPs,
		ActBytesIn: w.ActBytesIn + o.ActBytesIn, WeightBytes: w.WeightBytes + o.WeightBytes,
		BytesOut: w.BytesOut + o.BytesOut, Params: w.Params + o.Params, DType: d,
	}
}

// Bytes is all bytes read and written.
func (w Work) Bytes() int64 { return w.ActBytesIn + w.WeightBytes + w.BytesOut }
