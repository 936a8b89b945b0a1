// Package ort runs ONNX models on ONNX Runtime (the CPU build) through
// github.com/yalue/onnxruntime_go, converting between graph.Data and ONNX
// Runtime tensors.
//
// Process-wide state: ONNX Runtime keeps one environment per process, and
// onnxruntime_go keeps the loaded library and that environment in package
// variables. Open therefore loads the library and creates the environment at
// most once per process (guarded by a mutex); later calls with the same path
// return the same *Runtime, and a call with another path is an error. The
// environment lives until the process ends.
//
// Sessions are created from model bytes, fed and read in the order of the
// input and output names given. Session.Run is safe for concurrent use: it
// creates its tensors per call, and ONNX Runtime allows concurrent runs of one
// session.
//
// Element types: float32, float64, int8, uint8, int16, uint16, int32, uint32,
// int64, uint64 and bool are supported everywhere, scalars and empty tensors
// included. float16, bfloat16, the float8 types, int4 and uint4 (two to a
// byte) travel as raw bytes; the binding can only carry them in non-empty
// tensors of rank ≥ 1, and such outputs
// must have a static shape declared in the model (the binding cannot copy
// such a tensor that ONNX Runtime allocated itself). A rank-0 output is only
// returned when the model declares it as a scalar (shape present, no
// dimensions): the binding cannot wrap an ONNX Runtime-allocated scalar.
// Other types (strings, complex) are errors, and so is a
// model without inputs (the binding cannot run one).
//
// Builds without cgo: onnxruntime_go is cgo, so its files (data.go,
// runtime.go, session.go) build only with cgo; without it (a CGO_ENABLED=0
// cross-compile, e.g. for android/arm64) nocgo.go stands in and Open
// reports ErrNoCgo, so that the rest of inlay still builds and runs there.
// RandomData and SessionOptions are pure Go and exist in both builds.
//
// Every error starts with "ort: ".
package ort
