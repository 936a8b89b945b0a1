// Package profile measures subgraphs on a device, keeps the measurements in
// an embedded SQLite store, calibrates the analytic cost model to them and
// answers cost queries from them.
//
// A Device measures one standalone ONNX model (onnx.ExportSubgraph output)
// on one processor configuration: Local does it on this machine through
// package ort, pinned to the processor's cores; package agent's Client does
// it on a remote device. A measurement is warm-up runs, then Reps timed runs
// back to back summarised as a Timing (median, p90, min, max, standard
// deviation), then Cold timed runs, each after the device evicted its
// caches (Local writes a buffer of twice the cores' last-level cache,
// CacheBytes), whose median is Timing.Cold. Back to back, a subgraph finds
// its weights and code in the caches; in a plan its processor mostly ran
// other work just before, so the cold figure is what it will see (on the
// 2-core test machine the voice models' whole-model times were 1.2× to 8×
// their back-to-back ones cold, and 1.2× to 4× in a real run). For a
// plan's subgraphs, Idle timed runs follow, each after the eviction and a
// sleep (Local: IdleGap), whose median is Timing.Idle: a processor that has
// idled runs its first work after waking slower (on the 2-core host up to
// about 0.7 ms more), and in a workload whose groups arrive
// at rates, a request's first subgraph starts on such a processor. The
// Estimator pools the differences (Idle − Cold) of a processor
// configuration's measurements into one wake-up, their median, and charges
// it as the hand-off before any subgraph there that starts its model on
// its request's arrival (cost.HandOffEstimator, from -1).
//
// The Store (Open) is one SQLite file (modernc.org/sqlite, no cgo) in WAL
// mode, created on first use, with a schema version table. Tables and
// columns added since version 1 (in-situ measurements, cold and idle runs) are added
// to older files when they are opened, with no version change. A measurement is
// keyed by device, model content hash (graph.Model.Hash), layer-set key
// (graph.LayerSet.Key), processor name, backend, data type and the
// subgraph's input shapes (ShapesKey); it records the timing, the ONNX
// Runtime version and when it was taken. A subgraph that could not run is
// stored with its error, so that a profiler does not retry it every time.
//
// The Profiler decides what to measure for a workload (every single layer
// of every model on every processor configuration, contiguous chunks of
// layers for calibration, and the subgraphs of the plans planners make),
// skips what the store holds, measures the rest and stores it. Processors
// that are identical but for their name and cores (the host platform's one
// processor per core) are one processor class: only the class's first
// processor is measured and its figures stand for every member (Twins), so
// a 16-core host is profiled as fast as a one-core one.
//
// In-situ measurements (Store.PutInSitu, written by inlay run --record)
// are a subgraph's times inside a real run: from the runtime handing it to
// its worker to the runtime taking its report, among the other models'
// work and with the cores idling between requests. They sit in a table of
// their own (the calibration never sees them) under the same keys.
//
// Estimator implements cost.Estimator: for an exact match of (model hash,
// layer set, processor class, backend, dtype, input shapes) on the device,
// the in-situ Typical figure when there is one, else the cold median when
// the measurement has cold runs, else the back-to-back median; otherwise
// the base estimator's figure. Misses counts the distinct subgraphs that
// fell back.
//
// Calibrate fits each processor class's cost.Efficiency (compute efficiency
// per operator class, memory efficiency, the saturation size, the dispatch
// and layer overheads, scales on the nominal peak and bandwidth, a cache and
// the cost of copying tensors in and out of a subgraph) to the stored
// measurements: a bounded coordinate search minimising the mean absolute
// log error, fitted to each measurement's minimum (steady when other work
// disturbs the machine) or median. It reports the mean absolute percentage
// error on multi-layer subgraphs held back from the fit, before and after.
// It also fits a cold-cache correction (ColdFit: the ratio of the cold
// runs' median to the fitted figure, log-linear in the figure) for the
// Estimator to scale its fallback figures with once it answers measured
// subgraphs with cold figures, and reports its held-back error against the
// cold runs. inlay profile stores the fitted factors and the correction
// (Store.PutCalibration); the commands that plan build their cost model
// from them.
//
// Errors start with "profile: ".
package profile
