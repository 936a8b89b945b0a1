package quant

import (
	"github.com/inlay-dev/inlay/graph"
)

// dynamicInput is an activation quantized at run time: the three outputs
// of its DynamicQuantizeLinear.
type dynamicInput struct{ q, scale, zero string }

// dynamic rewrites Conv and MatMul as quantize_dynamic does:
// DynamicQuantizeLinear on each activation input, ConvInteger or
// MatMulInteger, Cast to float, Mul by the product of the scales, and for
// a Conv with bias an Add of the bias reshaped to broadcast over the
// channels. Weights are quantized per tensor: uint8 asymmetric for
// ConvInteger (ONNX Runtime's CPU ConvInteger takes uint8 weights only),
// int8 symmetric for MatMulInteger.
func dynamic(e *editor) error {
	nodes, err := topo(e.m)
	if err != nil {
		return err
	}
	dq := map[string]dynamicInput{}
	quantizeInput := func(x string) dynamicInput {
		if d, ok := dq[x]; ok {
			return d
		}
		d := dynamicInput{q: e.fresh(x + "_quantized"), scale: e.fresh(x + "_scale"), zero: e.fresh(x + "_zero_point")}
		e.emit("DynamicQuantizeLinear", "", x+"_QuantizeLinear", []string{x}, []string{d.q, d.scale, d.zero})
		dq[x] = d
		return d
	}
	type weight struct{ q, scale, zero string }
	weights := map[string]weight{}
	for _, n := range nodes {
		if !defaultDomain(n) || (n.Op != "Conv" && n.Op != "MatMul") || len(n.Outputs) != 1 || !e.isActivation(input(n, 0)) {
			e.keep(n)
			continue
		}
		out := n.Outputs[0]
		w := e.konst(input(n, 1))
		var bias *graph.Data
		if n.Op == "Conv" {
			bias = e.konst(input(n, 2))
			if w == nil || w.DType != graph.Float32 || (input(n, 2) != "" && (bias == nil || bias.DType != graph.Float32)) {
				e.keep(n)
				continue
			}
		} else if w == nil && !e.isActivation(input(n, 1)) || w != nil && w.DType != graph.Float32 {
			e.keep(n)
			continue
		}
		e.quantized++
		x := quantizeInput(n.Inputs[0])
		var b weight
		switch {
		case w == nil:
			d := quantizeInput(n.Inputs[1])
			b = weight{d.q, d.scale, d.zero}
		case weights[n.Inputs[1]].q != "":
			b = weights[n.Inputs[1]]
		default:
			dt, symmetric := graph.Int8, true
			if n.Op == "Conv" {
				dt, symmetric = graph.Uint8, false
			}
			qw, err := quantizeWeight(w, dt, -1, symmetric)
			if err != nil {
				return err
			}
			s, z := e.weightParams(n.Inputs[1], qw, dt)
			b = weight{e.initializer(n.Inputs[1]+"_quantized", qw.data), s, z}
			weights[n.Inputs[1]] = b
		}
		op := n.Op + "Integer"
		var attrs graph.Attrs
		if n.Op == "Conv" {
			attrs = n.Attrs
		}
		acc := e.fresh(out + "_output_quantized")
		e.emit(op, "", n.Name+"_quant", []string{x.q, b.q, x.zero, b.zero}, []string{acc}, attrs...)
		cast := e.fresh(acc + "_cast_output")
		e.emit("Cast", "", acc+"_cast", []string{acc}, []string{cast}, intAttr("to", int64(graph.Float32)))
		scales := e.fresh(out + "_scales_mul_output")
		e.emit("Mul", "", out+"_scales_mul", []string{x.scale, b.scale}, []string{scales})
		scaled := out
		if bias != nil {
			scaled = e.fresh(out + "_output_scaled")
		}
		e.emit("Mul", "", out+"_output_scale_mul", []string{cast, scales}, []string{scaled})
		if bias != nil {
			rank := len(e.m.Tensors[out].Shape)
			shape := make([]int64, rank)
			for i := range shape {
				shape[i] = 1
			}
			shape[1] = -1
			reshaped := e.fresh(n.Inputs[2] + "_reshape_output")
			e.emit("Reshape", "", n.Inputs[2]+"_reshape", []string{n.Inputs[2], e.ints64(n.Inputs[2]+"_reshape_shape", shape)}, []string{reshaped})
			e.emit("Add", "", out+"_bias_add", []string{scaled, reshaped}, []string{out})
		}
	}
	return nil
}
