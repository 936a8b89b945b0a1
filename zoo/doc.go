// Package zoo builds inlay's nine reference networks — the models of the
// mobile multi-model scheduling literature — layer by layer in Go, with the
// published architectures and standard ONNX operators (opset 17). Nothing is
// downloaded: weights are initializers whose values are left unset
// (graph.Data.Raw nil) and are filled with seeded random values when a model
// is exported (onnx.Encode). Constants whose values matter — Reshape targets,
// Resize sizes, Slice bounds, BatchNormalization statistics, YOLO grids —
// carry real little-endian bytes. So do normalisation scales and shifts and
// squeeze-excitation gate biases: they are set so that the exported random
// network keeps its activations' magnitude from input to output (He scaling
// of the random convolution weights) instead of vanishing into denormal
// numbers, which would distort measured run times.
//
// Names lists the networks in a fixed order; Build returns one as a
// graph.Model on which shape inference (infer.Run) has run, so every tensor
// has a known shape and every node its Work, with Model.Hash set to a content
// hash of the built graph that is stable across runs. Build is deterministic
// and takes milliseconds.
//
// Parameter counts follow the sources' convention: TrainableParams counts
// the learned initializers and leaves out buffers (BatchNormalization running
// statistics, anchor grids, shape constants), as PyTorch's
// sum(p.numel() for p in model.parameters()) does; Model.Params counts them
// all.
package zoo
