// Package verify holds the model layer's ground-truth tests against ONNX
// Runtime. It has no code of its own outside its tests.
//
// Each model (the real models of shared/REAL_MODELS.md as onnx.Load loads
// them, and the zoo networks as zoo.Build builds and onnx.Encode writes
// them) runs once on ONNX Runtime with seeded random inputs (known values
// where a model needs them, e.g. the VAD's sample rate) and with every
// top-level node output exposed. Then:
//
//   - every node output's inferred dtype and shape must equal ONNX
//     Runtime's, and every value folded at load time its value (also at
//     other batch sizes and resolutions of the real models);
//   - random convex layer sets exported with onnx.ExportSubgraph must
//     declare the boundary as their interface and, run alone on the full
//     run's intermediate values, reproduce the full run's values of their
//     outputs: max |a-b| ≤ 1e-4 · max(1, max |b|).
//
// The quantized variants of the real models and of zoo networks (package
// quant: static QDQ and QOperator calibrated on three float runs, and
// dynamic) go through the same two checks on unfused runs, integer
// tensors compared exactly (quant_test.go; a sample in make test, every
// network with INLAY_E2E).
//
// The tests skip (or, with INLAY_REQUIRE_ASSETS=1, fail) when the models or
// the ONNX Runtime library have not been fetched; -short skips the zoo
// networks. Run `go test ./verify -v` to see per-model counts, and
// `go test ./verify -run NONE -bench .` for per-model ONNX Runtime latency.
package verify
