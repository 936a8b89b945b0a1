// Package infer is inlay's static shape inference: given a graph.Model whose
// graph inputs have known shapes, Run gives every tensor its dtype and fully
// known shape, folds constants and fills every node's Work.
//
// Contract:
//   - Nodes are visited in m.TopoOrder() (ties by node ID), so results and
//     errors are deterministic.
//   - Constant folding: a node whose present inputs are all constants with
//     values (initializers with Raw data, or Folded tensors) is evaluated
//     when the operator has an evaluator and no input or output exceeds
//     MaxFoldElements elements; its outputs become graph.Folded with Data.
//     Shape and Size always fold (all shapes are known), and so do
//     ConstantOfShape and Range when small. Evaluators exist for the
//     element-wise unary and binary operators, Max/Min/Sum/Mean, Where,
//     Clip, Cast, Identity, Dropout, Shape, Size, Reshape, Flatten,
//     Squeeze, Unsqueeze, Concat, Split, Slice, Gather, Transpose, Expand,
//     Tile, ConstantOfShape, Range, NonZero, Pad (constant mode),
//     GatherElements, ScatterND, ScatterElements, CumSum, ArgMax, ArgMin,
//     Trilu, MatMul (float) and ReduceSum/Mean/Max/Min/Prod.
//   - Initializers whose Data.Raw is nil (weights whose values do not
//     matter) have known shapes; their values are needed only when they
//     feed shape arithmetic, which is then an error naming the input.
//   - Operators whose output shape depends on values (Reshape's shape,
//     Slice's starts, Expand, Tile, Range, ConstantOfShape, OneHot's
//     depth, TopK's K, NonZero, Compress, Unique, ...) need those values to
//     be constant; otherwise Run returns an error naming the node and the
//     input. NonMaxSuppression gets its documented upper bound:
//     batch·classes·min(max_output_boxes_per_class, boxes) rows.
//   - Nodes with graph attributes (If, Loop, Scan) are inferred through
//     Options.Nested; their Work is what Nested reports.
//   - Errors are one line: `infer: node "name" (Op): ...`; an operator
//     without a rule gives `no shape rule for operator Op`. Bad input never
//     panics: shapes that disagree, negative or overflowing dimensions,
//     bad attributes all return errors.
//   - Work follows graph's conventions (see package graph): MACs for Conv,
//     ConvTranspose, Gemm, MatMul, Einsum and their quantized relatives and
//     for LSTM/GRU/RNN; FLOPs for everything (2 per MAC plus element-wise
//     operations); bytes and Params from the node's tensors. Folded nodes
//     and Constant nodes have zero Work.
//
// Supported operators: see Supported(), generated from the rule table. Besides
// the default ONNX domain, a few com.microsoft contrib operators that ONNX
// Runtime's tools emit are covered (QLinearAdd, QLinearMul, QLinearConv,
// QLinearConcat, QLinearSigmoid, QGemm, MatMulNBits, FusedMatMul, FusedConv,
// Attention, MultiHeadAttention, Gelu, FastGelu, SkipLayerNormalization,
// ...). Sequence, optional and string operators are not: the IR holds
// tensors only.
//
// Every case of the package's operator tables is also run on ONNX Runtime
// (when its library is fetched) and must agree on dtypes, shapes and folded
// values.
//
// Cost: linear in nodes plus the elements of folded values; the 765-node OCR
// recognition model infers in a few milliseconds.
package infer
