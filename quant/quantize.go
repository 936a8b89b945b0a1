package quant

import (
	"fmt"

	"github.com/inlay-dev/inlay/graph"
)

// Format is a quantized model's form.
type Format int

const (
	// QDQ is static quantization with QuantizeLinear/DequantizeLinear pairs.
	QDQ Format = iota
	// QOperator is static quantization with operator-oriented QLinear* nodes.
	QOperator
	// Dynamic is quantize_dynamic's form: activations quantized at run time.
	Dynamic
)

// Formats lists every format, in order.
var Formats = []Format{QDQ, QOperator, Dynamic}

func (f Format) String() string {
	switch f {
	case QDQ:
		return "qdq"
	case QOperator:
		return "qoperator"
	case Dynamic:
		return "dynamic"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat is the inverse of String.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("unknown quantization format %q (valid: qdq, qoperator, dynamic)", s)
}

// Static reports whether the format needs calibrated ranges.
func (f Format) Static() bool { return f != Dynamic }

// Result is a quantized model and what the quantizer did.
type Result struct {
	// Model is the quantized model as onnx.Decode loads and infers it;
	// onnx.Encode(Model, 0) writes it.
	Model *graph.Model
	// Quantized counts the float operators that were quantized.
	Quantized int
	// Upgraded is the opset the model was upgraded from (0 if not).
	Upgraded int64
}

// Quantize quantizes the top-level graph of m in format f. Static formats
// take the float model's activation ranges (Calibrate); an operator whose
// activations have no finite range stays float. m is not modified; its
// weights without values get the seeded values onnx.Encode(m, 0) writes.
func Quantize(m *graph.Model, f Format, ranges Ranges) (*Result, error) {
	if f.Static() && len(ranges) == 0 {
		return nil, fmt.Errorf("quant: %s quantization needs calibrated ranges", f)
	}
	e, err := newEditor(m)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if from := e.m.Opset(); from < targetOpset {
		if err := upgrade(e); err != nil {
			return nil, err
		}
		res.Upgraded = from
	}
	switch f {
	case QDQ:
		err = qdq(e, ranges)
	case QOperator:
		err = qoperator(e, ranges)
	case Dynamic:
		err = dynamic(e)
	default:
		err = fmt.Errorf("quant: unknown format %d", int(f))
	}
	if err != nil {
		return nil, err
	}
	res.Quantized = e.quantized
	if res.Model, err = e.finish(); err != nil {
		return nil, err
	}
	return res, nil
}

// defaultDomain reports whether n is an operator of the default domain.
func defaultDomain(n *graph.Node) bool { return n.Domain == "" || n.Domain == "ai.onnx" }

// weightAxis is the output-channel axis of a weight for per-channel
// quantization: Conv's 0, MatMul's last (columns) for a 2-D weight, Gemm's
// by transB; -1 when the weight is quantized per tensor.
func weightAxis(n *graph.Node, w *graph.Data) int {
	switch n.Op {
	case "Conv":
		return 0
	case "MatMul":
		if len(w.Dims) == 2 {
			return 1
		}
	case "Gemm":
		if n.Attrs.Int("transB", 0) != 0 {
			return 0
		}
		return 1
	}
	return -1
}

// channelCount is the number of output channels of a weight along axis.
func channelCount(w *graph.Data, axis int) int64 {
	if axis < 0 {
		return 1
	}
	return w.Dims[axis]
}

// biasFits reports whether a bias can be quantized against the weight's
// scales: one value per output channel (or a single one per tensor).
func biasFits(b *graph.Data, channels int64) bool {
	if b == nil || b.DType != graph.Float32 {
		return false
	}
	n, ok := b.Dims.Elements()
	return ok && len(b.Dims) == 1 && (n == channels || channels == 1)
}
