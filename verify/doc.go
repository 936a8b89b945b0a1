// Package verify holds the model layer's ground-truth tests: they check the
// shapes that package onnx infers, and the subgraphs it exports, against
// what ONNX Runtime computes on the real models of shared/REAL_MODELS.md.
// It has no code of its own outside its tests; the tests skip (or, with
// INLAY_REQUIRE_ASSETS=1, fail) when the models or the ONNX Runtime library
// have not been fetched.
//
// Run it with `go test ./verify -v` to see per-model counts, and with
// `go test ./verify -run NONE -bench .` for per-model ONNX Runtime latency.
package verify
