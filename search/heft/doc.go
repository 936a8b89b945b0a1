// Package heft is the HEFT list scheduler with insertion (Topcuoglu et al.,
// IEEE TPDS 2002), in two layers: Run schedules an abstract task graph
// (Problem: costs per task and processor, edges with communication costs),
// and Planner applies it to a workload's layer graphs and turns the
// schedule into a plan.
//
// Planner: each group's models form one DAG (their layer graphs, plus an
// edge from every last layer of a model to every first layer of the models
// that wait for it); all groups are scheduled together, so models of
// different groups share the processors' timelines as they will at run
// time. Each processor runs its default configuration (backend and data
// type); a layer's cost on it is cost.Estimator.Subgraph of the layer alone
// (cached), +Inf where it is unsupported; communication is
// cost.Estimator.Transfer of the edge's bytes. The schedule becomes a plan by
// walking each model's layers in order of their HEFT start times and merging
// consecutive layers on the same processor into one subgraph: a run of
// consecutive positions of a topological order is always convex, and the runs
// come out in a topological order. Model priorities follow the highest
// upward rank among their layers (higher rank: lower priority number).
package heft
