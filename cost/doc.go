// Package cost predicts how long a subgraph takes on a processor
// configuration and how long a tensor takes to move between processors,
// behind the small Estimator interface.
//
// Analytic is a roofline per operator class: a layer takes
//
//	max(compute, memory) + layer overhead
//	compute = Σ over its nodes FLOPs / (peak(dtype) · e(class) · s)
//	memory  = bytes / (bandwidth · memory efficiency)
//	s(f)    = f / (f + HalfFLOPs) for the layer's anchor operator, 1 for the
//	          element-wise riders fused into it (larger kernels reach better
//	          utilisation along a saturating curve; the form keeps time
//	          monotonic in every node's FLOPs)
//
// and a subgraph takes one dispatch overhead plus the sum of its layers,
// with the non-linearity Puzzle (arXiv 2508.17764) reports: a tensor passed
// between two layers of the same subgraph that fits the processor's on-chip
// memory is neither written to nor read from DRAM; an element-wise layer fed
// only from inside the subgraph fuses into its producer (no layer overhead);
// the dispatch overhead is paid once per subgraph, not per layer. So
// time(A∪B) < time(A) + time(B) for neighbouring A and B. Lower-precision
// data types change the peak (the processor's figure for that type) and the
// bytes (float tensors scale by the type's size: int8 moves a quarter of
// float32's bytes). Precision is a property of the layer
// (graph.Layer.Precision): on an integer configuration a quantized model's
// quantized layers run in the integer type with their QuantizeLinear and
// DequantizeLinear fused away, as delegates do, and its float layers at the
// processor's best float peak; on a float configuration a quantized layer
// runs dequantized, at float cost plus its conversions. A float model on
// an integer configuration (only when its workload allows it) is taken as
// quantized by the delegate. The efficiency factors are exported per processor
// (Efficiency) so that a calibration step can fit them.
//
// A node the processor cannot run (hw.Platform.Supports) makes the subgraph
// infeasible: Subgraph returns an error wrapping ErrUnsupported that names
// the layer, the node and the reason, never a cheap time.
//
// Measured wraps another Estimator and overrides it with measured times
// from a JSON or CSV table (see LoadMeasured for the formats).
//
// Estimators are pure after construction and safe for concurrent use;
// Analytic precomputes per-layer figures per (layer graph, configuration)
// on first use, so that Subgraph is a sum over the set's layers.
package cost
