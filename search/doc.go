// Package search holds inlay's planners, one sub-package each, and the
// explicit registry that names them (no init() registration):
//
//   - single:<processor or kind> — everything on one processor, CPU
//     fallback for unsupported layers (search/single);
//   - bestmap — each whole model on its fastest processor configuration,
//     Puzzle's "Best Mapping" (search/bestmap);
//   - heft — HEFT with insertion over the layer graphs (search/heft);
//   - the search planners (puzzle, inlay) in their own packages.
//
// Planners are deterministic for a request and seed and never touch the
// file system. search/partition turns per-layer assignments into convex
// subgraphs; search/dag schedules plain task graphs from the scheduling
// literature.
package search
