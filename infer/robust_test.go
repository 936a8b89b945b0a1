package infer

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

// randomAttr draws a plausible or hostile value for a commonly used attribute.
func randomAttr(rng *rand.Rand, name string) graph.Attr {
	small := func() int64 {
		switch rng.Intn(8) {
		case 0:
			return -1 - rng.Int63n(3)
		case 1:
			return 1 << (30 + rng.Intn(33))
		case 2:
			return -(1 << 62)
		}
		return rng.Int63n(5)
	}
	switch name {
	case "auto_pad":
		return aStr(name, []string{"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "BOGUS"}[rng.Intn(5)])
	case "mode", "direction", "equation", "reduction", "approximate", "keep_aspect_ratio_policy":
		vals := map[string][]string{
			"mode":                     {"nearest", "linear", "cubic", "constant", "DCR", "CRD"},
			"direction":                {"forward", "reverse", "bidirectional", "LEFT", "RIGHT"},
			"equation":                 {"ij,jk->ik", "...ij,...jk", "ii->i", "i,i", "->", "a.b", "ij->ji", "...", "bij,bjk->bik", ",", "i...->"},
			"reduction":                {"none", "mean", "sum"},
			"approximate":              {"none", "tanh"},
			"keep_aspect_ratio_policy": {"stretch", "not_larger", "not_smaller"},
		}[name]
		return aStr(name, vals[rng.Intn(len(vals))])
	case "scales":
		return aFloats(name, rng.Float32()*3, rng.Float32()*3, -1, 1e30)
	case "alpha", "beta", "min", "max", "lambd", "bias":
		return aFloat(name, rng.Float32()*4-2)
	}
	if rng.Intn(3) == 0 {
		return aInt(name, small())
	}
	v := make([]int64, rng.Intn(9))
	for i := range v {
		v[i] = small()
	}
	return aInts(name, v...)
}

var attrNames = strings.Fields(`axis axes perm kernel_shape strides pads dilations group split starts ends to keepdims
	blocksize hidden_size direction layout equation transA transB k mode num_outputs batch_dims allowzero start end
	auto_pad ceil_mode output_padding output_shape onesided sample_size dtype shape noop_with_empty_axes
	output_height output_width pooled_shape scales alpha beta min max fmod select_last_index stash_type
	keep_aspect_ratio_policy output_dtype value_ints`)

// randomShape draws a small shape, now and then a zero or a huge dimension.
func randomShape(rng *rand.Rand) graph.Shape {
	s := make(graph.Shape, rng.Intn(6))
	for i := range s {
		switch rng.Intn(12) {
		case 0:
			s[i] = 0
		case 1:
			s[i] = 1 << (20 + rng.Intn(20))
		default:
			s[i] = 1 + rng.Int63n(5)
		}
	}
	if _, ok := s.Elements(); !ok {
		return graph.Shape{2}
	}
	return s
}

var dtypes = []graph.DType{graph.Float32, graph.Int64, graph.Bool, graph.Uint8, graph.Int32, graph.Float16, graph.Int8}

// TestNoPanics drives every rule with random inputs and attributes: Run may
// fail, but must return an error rather than panic, and whatever it accepts
// must have fully known shapes.
func TestNoPanics(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	trials := 150
	if testing.Short() {
		trials = 20
	}
	okCount := map[string]int{}
	defer func() {
		var zero []string
		for _, k := range Supported() {
			if okCount[k] == 0 {
				zero = append(zero, k)
			}
		}
		t.Logf("operators never accepted in %d random trials: %v", trials, zero)
	}()
	for _, key := range Supported() {
		op, domain := key, ""
		if i := strings.LastIndex(key, ":"); i >= 0 {
			domain, op = key[:i], key[i+1:]
		}
		for trial := 0; trial < trials; trial++ {
			b := newModel([]int64{7, 9, 10, 11, 13, 17, 18, 20}[rng.Intn(8)])
			if domain != "" {
				b.m.Opsets = append(b.m.Opsets, graph.OpsetImport{Domain: domain, Version: 1})
			}
			nin := rng.Intn(9)
			ins := make([]string, nin)
			for i := range ins {
				name := fmt.Sprintf("i%d", i)
				ins[i] = name
				dt := dtypes[rng.Intn(len(dtypes))]
				if i == 0 && rng.Intn(2) == 0 {
					dt = graph.Float32
				}
				switch rng.Intn(5) {
				case 0:
					ins[i] = ""
				case 1, 2:
					// a constant with values
					s := randomShape(rng)
					if n, _ := s.Elements(); n > 64 {
						s = graph.Shape{int64(rng.Intn(5))}
					}
					n, _ := s.Elements()
					v := make([]int64, n)
					for k := range v {
						v[k] = rng.Int63n(9) - 2
						if rng.Intn(10) == 0 {
							v[k] = 1 << (20 + rng.Intn(43))
						}
					}
					b.ints(name, s, v...)
					if rng.Intn(3) == 0 {
						b.m.Tensors[name].Data = (&value{dt: graph.Float32, shape: s, f: b.floatsOf(v)}).data()
						b.m.Tensors[name].DType = graph.Float32
					}
				default:
					b.input(name, dt, randomShape(rng)...)
				}
			}
			var attrs graph.Attrs
			for _, a := range attrNames {
				if rng.Intn(6) == 0 {
					attrs = append(attrs, randomAttr(rng, a))
				}
			}
			nout := 1 + rng.Intn(3)
			outs := make([]string, nout)
			for i := range outs {
				outs[i] = fmt.Sprintf("o%d", i)
			}
			b.m.Nodes = append(b.m.Nodes, &graph.Node{Name: "n", Op: op, Domain: domain, Inputs: ins, Outputs: outs, Attrs: attrs})
			b.output(outs...)
			desc := fmt.Sprintf("%s trial %d: inputs %v attrs %+v", key, trial, describeInputs(b.m, ins), attrs)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v\n%s", r, desc)
					}
				}()
				if err := Run(b.m, Options{}); err != nil {
					if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "infer: ") {
						t.Errorf("error not one line with prefix: %q", err)
					}
					return
				}
				okCount[key]++
				for _, o := range outs {
					if s := b.m.Tensors[o].Shape; s == nil || !s.Known() {
						t.Errorf("%s: output %s has shape %v", desc, o, s)
					}
				}
			}()
		}
	}
}

func (b *builder) floatsOf(v []int64) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return f
}

func (v *value) data() *graph.Data { return encode(v) }

func describeInputs(m *graph.Model, ins []string) string {
	var parts []string
	for _, in := range ins {
		if in == "" {
			parts = append(parts, "-")
			continue
		}
		t := m.Tensors[in]
		d := fmt.Sprintf("%s %s %s", t.Kind, t.DType, t.Shape)
		if t.Data != nil && t.Data.Raw != nil {
			if v, err := decode(t.DType, t.Shape, t.Data.Raw); err == nil {
				d += fmt.Sprintf(" %v", v.floats())
			}
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, "; ")
}

// TestMutatedCasesNoPanics takes every valid case of the operator tables
// and perturbs one thing at a time (a dimension, an attribute, a constant
// value, a missing input); Run must never panic.
func TestMutatedCasesNoPanics(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var cases []opCase
	cases = append(cases, convCases()...)
	cases = append(cases, matrixCases()...)
	cases = append(cases, elementwiseCases()...)
	for _, f := range foldCases() {
		cases = append(cases, opCase{name: "fold " + f.name, opset: 13, build: f.build})
	}
	trials := 300
	if testing.Short() {
		trials = 30
	}
	hostile := []int64{0, 1, 2, 3, -1, -2, 1 << 31, 1 << 40, 1 << 62, -(1 << 62), -1 << 63, 1<<63 - 1}
	for _, tc := range cases {
		for trial := 0; trial < trials; trial++ {
			b := tc.model()
			n := b.m.Nodes[len(b.m.Nodes)-1]
			for k := 0; k < 1+rng.Intn(2); k++ {
				switch rng.Intn(4) {
				case 0: // a dimension of a non-constant input
					var names []string
					for _, in := range n.Inputs {
						if tt := b.m.Tensors[in]; in != "" && tt != nil && len(tt.Shape) > 0 && tt.Data == nil {
							names = append(names, in)
						}
					}
					if len(names) > 0 {
						tt := b.m.Tensors[names[rng.Intn(len(names))]]
						tt.Shape = tt.Shape.Clone()
						tt.Shape[rng.Intn(len(tt.Shape))] = hostile[rng.Intn(4)]
						if _, ok := tt.Shape.Elements(); !ok {
							tt.Shape[0] = 0
						}
					}
				case 1: // an attribute value
					if len(n.Attrs) > 0 {
						a := &n.Attrs[rng.Intn(len(n.Attrs))]
						h := hostile[rng.Intn(len(hostile))]
						switch a.Kind {
						case graph.AttrInt:
							a.Int = h
						case graph.AttrInts:
							a.Ints = append([]int64{}, a.Ints...)
							if len(a.Ints) > 0 && rng.Intn(4) > 0 {
								a.Ints[rng.Intn(len(a.Ints))] = h
							} else {
								a.Ints = append(a.Ints, h)
							}
						case graph.AttrFloats:
							a.Floats = append([]float32{}, a.Floats...)
							if len(a.Floats) > 0 {
								a.Floats[rng.Intn(len(a.Floats))] = float32(h)
							}
						}
					} else {
						n.Attrs = append(n.Attrs, randomAttr(rng, attrNames[rng.Intn(len(attrNames))]))
					}
				case 2: // a constant input's values
					for _, in := range n.Inputs {
						tt := b.m.Tensors[in]
						if in == "" || tt == nil || tt.Data == nil || tt.Data.Raw == nil || tt.DType != graph.Int64 {
							continue
						}
						v, err := decode(tt.DType, tt.Shape, tt.Data.Raw)
						if err != nil || len(v.i) == 0 {
							continue
						}
						v.i = append([]int64{}, v.i...)
						v.i[rng.Intn(len(v.i))] = hostile[rng.Intn(len(hostile))]
						tt.Data = encode(v)
						break
					}
				case 3: // drop or add an input
					if len(n.Inputs) > 0 && rng.Intn(2) == 0 {
						n.Inputs = append([]string{}, n.Inputs...)
						n.Inputs[rng.Intn(len(n.Inputs))] = ""
					} else {
						n.Inputs = append(append([]string{}, n.Inputs...), n.Inputs[0])
					}
				}
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s trial %d: panic: %v\ninputs %s attrs %+v", tc.name, trial, r, describeInputs(b.m, n.Inputs), n.Attrs)
					}
				}()
				if err := Run(b.m, Options{}); err != nil {
					if strings.Contains(err.Error(), "\n") {
						t.Errorf("error is not one line: %q", err)
					}
					return
				}
				for _, o := range n.Outputs {
					if s := b.m.Tensors[o]; o != "" && (s.Shape == nil || !s.Shape.Known()) {
						t.Errorf("%s: output %s has shape %v", tc.name, o, s.Shape)
					}
				}
			}()
		}
	}
}
