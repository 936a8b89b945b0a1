// Package plan is the output of planning: for every model of a workload a
// partition of its layers into subgraphs, for every subgraph the processor,
// backend and data type it runs on, and per-model priorities. It also holds
// the interface planners implement (Planner), what they are asked (Request)
// and how they ask for a plan to be scored (Evaluator; package sim
// implements it). Planners ask, they never simulate themselves.
//
// A plan file is YAML (.yaml, .yml) or JSON (.json) with the same fields:
//
//	planner: heft
//	platform: phone
//	models:
//	  - model: det
//	    priority: 0            # lower runs first
//	    subgraphs:             # in a topological order
//	      - {layers: "0-41,43", processor: npu, backend: qnn-htp, dtype: int8}
//	      - {layers: "42", processor: cpu, backend: xnnpack, dtype: float32}
//
// Layers are graph.LayerSet keys of the model's layer graph. Parse and Load
// check the file's form (strict: unknown fields are errors); Validate checks
// the plan against a loaded workload and a platform: every layer in exactly
// one subgraph, every subgraph convex and runnable on its processor (every
// operator supported, backend and data type offered), subgraphs listed in a
// topological order.
package plan
