// Package quant quantizes float ONNX models the way ONNX Runtime's
// quantization tool does, in its three forms:
//
//   - QDQ (static): QuantizeLinear → DequantizeLinear pairs on the
//     activations of the quantizable operators (uint8, asymmetric, scales
//     from calibration), weights stored as int8 initializers quantized
//     symmetrically per output channel and read through a per-axis
//     DequantizeLinear, biases as int32 with scale x_scale·w_scale.
//   - QOperator (static): the operator-oriented form: QLinearConv,
//     QLinearMatMul, com.microsoft QGemm, QLinearAdd, QLinearMul,
//     QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
//     QLinearAveragePool and QLinearConcat; MaxPool and the data-movement
//     operators run on the uint8 tensors directly, a Relu or Clip right
//     after a quantized operator is folded into its output range, and
//     QuantizeLinear/DequantizeLinear sit where float and integer parts
//     meet.
//   - Dynamic (quantize_dynamic): activations quantized at run time,
//     DynamicQuantizeLinear → ConvInteger or MatMulInteger → Cast → Mul by
//     x_scale·w_scale (→ Add of the bias), weights per tensor (uint8 for
//     ConvInteger, which ONNX Runtime's CPU kernels take only in uint8;
//     int8 for MatMulInteger).
//
// Static quantization needs activation ranges: Calibrate runs the float
// model on ONNX Runtime on sample inputs with every float tensor exposed
// and keeps each tensor's minimum and maximum (the MinMax method). A model
// whose opset is below 13 is first upgraded to opset 13 (Upgrade), where
// per-axis DequantizeLinear exists; operators whose form changed on the
// way (Slice, Clip, Squeeze, Unsqueeze, Split, ReduceSum, Softmax, Pad,
// TopK) are rewritten, others that changed meaning are an error.
//
// The package exists as ground truth for the model layer: package verify
// quantizes the zoo and the real models with it and checks the quantized
// graphs against ONNX Runtime. Its output is a valid quantized model, not
// a tuned one (no per-operator exclusions, no accuracy tuning).
package quant
