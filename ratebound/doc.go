// Package ratebound proves upper bounds on the max sustainable rate scale
// of any plan of a workload on a platform under a cost model (Upper): the
// groups' critical paths against their deadlines, Hall-type bounds over
// sets of processors, and the fluid relaxation of the load (FluidDual, whose
// prices the inlay planner also uses). The proofs rest on the estimator's
// per-layer lower bounds (LayerLowerBounder, DispatchLowerBounder); without
// them the figure is an estimate and says so (Bound.Proven).
//
// The simulator, the planners and the reports import it; it imports none of
// them. It reads no clock, does no I/O and starts no goroutines.
package ratebound
