// Package train predicts one iteration of data-, tensor- and
// pipeline-parallel transformer training on a cluster of possibly unlike
// GPUs: its time, per stage and per GPU, and the memory each GPU needs.
//
// The inputs are a Model (a transformer configuration or a preset), a
// Cluster (GPU types with their calibrated efficiency, nodes, the
// intra-node link and the network) and a Plan (parallel degrees, per-stage
// layer ranges, GPU types and tensor-parallel degrees, data-parallel
// replicas with their batch shares, the pipeline schedule, recomputation,
// ZeRO and precision). Simulate is pure and deterministic: the same inputs
// give the same Result.
//
// Costs come from shapes: each layer's GEMMs and attention, priced by a few
// efficiency parameters per GPU type (Efficiency) that are shared by every
// model and plan on that type and fitted to published measurements by the
// train/published package. Memory follows Korthikanti et al. (MLSys 2023)
// for activations, with the ZeRO stages for parameters, gradients and
// optimizer states.
package train
