package ort

import "errors"

// ErrNoCgo is what Open returns in a build without cgo: the
// onnxruntime_go binding is cgo, so such a build (e.g. a CGO_ENABLED=0
// cross-compile for android/arm64) cannot load ONNX Runtime. Everything
// else in inlay works in such a build.
var ErrNoCgo = errors.New("this inlay was built without cgo (CGO_ENABLED=0) and cannot load ONNX Runtime; rebuild it with CGO_ENABLED=1 and a C compiler for the target")
