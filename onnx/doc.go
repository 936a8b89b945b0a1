// Package onnx reads ONNX models into inlay's graph IR and writes the IR
// (whole models or convex layer sets) back as ONNX.
//
// Import (Load, Decode): the file is decoded with the generated protobuf
// types of package onnxpb; tensors come from raw_data or the typed fields
// (all numeric dtypes; string tensors, external data, segments and sparse
// initializers are errors). Constant nodes stay nodes (they count as nodes)
// and their outputs are initializers holding the value. Graph inputs that
// are also initializers are initializers. Attributes map onto graph.Attrs;
// graph-valued ones keep the serialized GraphProto (graph.AttrGraph), other
// exotic kinds the serialized AttributeProto (graph.AttrOther). A node with
// nested graphs lists the enclosing-scope tensors they read in
// Node.Implicit.
//
// Symbolic input dimensions are resolved from Options.Inputs, else by
// defaults: the leading dimension is 1, a dimension whose dim_param names
// the batch (batch, batch_size, N, ...) is 1, and a dim_param an override
// fixed on one input takes that value on the others. Any other symbolic
// dimension is an error telling which --input flag to pass. Shape
// inference is package infer; nested graphs (If, Loop, Scan) are inferred
// recursively here (see nester), at most 16 levels deep.
//
// Every error of Load and Decode is a *LoadError: one line that starts with
// the file name and names the node where there is one. No input makes
// Decode panic, hang or allocate more than the file's size suggests: sizes
// declared in the file are checked against the data actually present
// before anything is allocated from them, declared tensors are capped at
// 1 TiB, and a recover at the Decode boundary turns any panic left into an
// error.
//
// Export (Encode, ExportSubgraph) writes deterministic bytes; weights
// without values are filled with seeded random values. ContentHash is the
// sha256 of model bytes, used as graph.Model.Hash.
package onnx
