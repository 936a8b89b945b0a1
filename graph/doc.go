// Package graph is inlay's intermediate representation of a neural network:
// tensors with element types and shapes, nodes with attributes and the work
// each does, a topological order with ties broken by node ID, and the
// condensed layer graph that planners partition.
//
// The package knows nothing of ONNX protobuf, processors or time. Loaders
// (package onnx, package zoo) build a Model; shape inference (package infer)
// fills shapes, folded constants and Work; BuildLayers condenses the result.
//
// Work conventions: MACs are multiply-accumulates of matrix-like operators —
// Conv: N·Cout·Hout·Wout·(Cin/group)·Kh·Kw; ConvTranspose: N·Cin·Hin·Win·
// (Cout/group)·Kh·Kw; Gemm and MatMul: output elements × K; LSTM/GRU/RNN:
// the MACs of their gate matrix products over the sequence. FLOPs count
// every arithmetic operation with one MAC as two FLOPs; operators without
// MACs count FLOPs only (element-wise: one per output element and operation;
// reductions and pooling: one per input element read by the window;
// Softmax: about five per element). Data movement (Reshape, Transpose,
// Concat, Gather, ...) counts zero FLOPs but its bytes.
//
// Bytes: ActBytesIn counts non-constant inputs, WeightBytes constant inputs
// (weights, biases, folded tables), BytesOut all outputs. Params counts the
// elements of a node's constant inputs; Model.Params counts every
// initializer and Constant-node value once.
package graph
