package ort

// SessionOptions tune a session; a zero field keeps ONNX Runtime's default.
type SessionOptions struct {
	// IntraOpThreads is the size of the thread pool used inside one operator.
	IntraOpThreads int
	// InterOpThreads is the size of the thread pool that runs independent
	// operators in parallel.
	InterOpThreads int
	// Optimization is the graph optimization level.
	Optimization Optimization
}

// Optimization is ONNX Runtime's graph optimization level.
type Optimization int

const (
	// OptimizeDefault keeps ONNX Runtime's default (all optimizations).
	OptimizeDefault Optimization = iota
	// OptimizeNone runs the graph as written: no constant folding, no
	// fusions. Two graphs that share nodes then compute them with the same
	// kernels, bit for bit, which comparisons across graphs rely on.
	OptimizeNone
	// OptimizeBasic applies semantics-preserving rewrites only (constant
	// folding, redundant node elimination).
	OptimizeBasic
	// OptimizeExtended adds complex node fusions.
	OptimizeExtended
	// OptimizeAll adds layout optimizations.
	OptimizeAll
)
