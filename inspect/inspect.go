// Package inspect summarises a model as inlay inspect prints it: inputs,
// outputs, per-operator counts, MACs, FLOPs and parameters, the largest
// tensors, layer count; for a model with symbolic dimensions, shapes and
// work as expressions in them. The JSON forms are inspect --json's.
package inspect

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/onnx"
)

// TensorInfo is a tensor as inspect reports it.
type TensorInfo struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape,omitempty"`
	Bytes int64   `json:"bytes,omitempty"`
	// Dims and ShapeText are a symbolic shape's dimensions ("N/32") and text.
	Dims      []string `json:"dims,omitempty"`
	ShapeText string   `json:"-"`
}

// OpStats is the work of all nodes of one operator type.
type OpStats struct {
	Op     string `json:"op"`
	Count  int    `json:"count"`
	MACs   int64  `json:"macs"`
	FLOPs  int64  `json:"flops"`
	Params int64  `json:"params"`
}

// Summary is what inspect prints; its JSON form is the --json output.
type Summary struct {
	Name      string       `json:"name"`
	Hash      string       `json:"hash"`
	Producer  string       `json:"producer,omitempty"`
	IRVersion int64        `json:"ir_version"`
	Opset     int64        `json:"opset"`
	Inputs    []TensorInfo `json:"inputs"`
	Outputs   []TensorInfo `json:"outputs"`
	Nodes     int          `json:"nodes"`
	Layers    int          `json:"layers"`
	Params    int64        `json:"params"`
	// TrainableParams leaves out batch-norm statistics, integer constants
	// and scalars (graph.Model.TrainableParams); Params counts every
	// initializer element.
	TrainableParams int64          `json:"trainable_params"`
	MACs            int64          `json:"macs"`
	FLOPs           int64          `json:"flops"`
	WeightBytes     int64          `json:"weight_bytes"`
	Ops             map[string]int `json:"ops"`
	OpStats         []OpStats      `json:"op_stats"`
	Largest         []TensorInfo   `json:"largest_tensors"`
}

func info(t *graph.Tensor) TensorInfo {
	shape := []int64(t.Shape)
	if shape == nil {
		shape = []int64{}
	}
	return TensorInfo{Name: t.Name, DType: t.DType.String(), Shape: shape}
}

// Summarize builds a model's summary (and its layer graph, for the count).
func Summarize(m *graph.Model) (*Summary, error) {
	lg, err := graph.BuildLayers(m)
	if err != nil {
		return nil, err
	}
	w := m.Totals()
	s := &Summary{
		Name: m.Name, Hash: m.Hash, Producer: m.Producer, IRVersion: m.IRVersion, Opset: m.Opset(),
		Nodes: len(m.Nodes), Layers: len(lg.Layers), Params: m.Params(), TrainableParams: m.TrainableParams(), MACs: w.MACs, FLOPs: w.FLOPs,
		Ops: map[string]int{}, Inputs: []TensorInfo{}, Outputs: []TensorInfo{},
	}
	for _, name := range m.Inputs {
		s.Inputs = append(s.Inputs, info(m.Tensors[name]))
	}
	for _, name := range m.Outputs {
		s.Outputs = append(s.Outputs, info(m.Tensors[name]))
	}
	byOp := tally(m, s.Ops, func(n *graph.Node, st *OpStats) {
		st.MACs += n.Work.MACs
		st.FLOPs += n.Work.FLOPs
	})
	for _, st := range byOp {
		s.OpStats = append(s.OpStats, *st)
	}
	sort.Slice(s.OpStats, func(i, j int) bool {
		a, b := s.OpStats[i], s.OpStats[j]
		if a.MACs != b.MACs {
			return a.MACs > b.MACs
		}
		return a.Op < b.Op
	})
	var all []TensorInfo
	for _, name := range m.SortedTensorNames() {
		t := m.Tensors[name]
		if t.Kind == graph.Initializer {
			s.WeightBytes += t.Bytes()
		}
		ti := info(t)
		ti.Bytes = t.Bytes()
		all = append(all, ti)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Bytes > all[j].Bytes })
	if len(all) > 5 {
		all = all[:5]
	}
	s.Largest = all
	return s, nil
}

// tally groups the model's nodes by operator (domain-qualified outside
// the default domain): each group's node count and parameters, counts in
// ops, and add called once a node for the rest of its work.
func tally(m *graph.Model, ops map[string]int, add func(n *graph.Node, st *OpStats)) map[string]*OpStats {
	byOp := map[string]*OpStats{}
	for _, n := range m.Nodes {
		op := n.Op
		if n.Domain != "" && n.Domain != "ai.onnx" {
			op = n.Domain + "." + n.Op
		}
		st := byOp[op]
		if st == nil {
			st = &OpStats{Op: op}
			byOp[op] = st
		}
		st.Count++
		st.Params += n.Work.Params
		ops[op]++
		add(n, st)
	}
	return byOp
}

// writeHead writes the model line and its producer, IR and opset line.
func (s *Summary) writeHead(b *strings.Builder) {
	hash := s.Hash
	if len(hash) > 16 {
		hash = hash[:16]
	}
	fmt.Fprintf(b, "model %s (sha256 %s)\n", s.Name, hash)
	meta := []string{}
	if s.Producer != "" {
		meta = append(meta, "producer "+s.Producer)
	}
	meta = append(meta, fmt.Sprintf("IR %d", s.IRVersion), fmt.Sprintf("opset %d", s.Opset))
	fmt.Fprintf(b, "%s\n", strings.Join(meta, ", "))
}

// writeEnds writes the table of graph inputs and outputs, each shape as
// shape formats it, and a blank line.
func (s *Summary) writeEnds(b *strings.Builder, shape func(TensorInfo) string) {
	ends := textfmt.Table{Header: []string{"", "NAME", "DTYPE", "SHAPE"}, Align: []textfmt.Align{textfmt.Left, textfmt.Left, textfmt.Left, textfmt.Left}}
	for _, t := range s.Inputs {
		ends.Add("input", t.Name, t.DType, shape(t))
	}
	for _, t := range s.Outputs {
		ends.Add("output", t.Name, t.DType, shape(t))
	}
	b.WriteString(ends.String())
	b.WriteString("\n")
}

// orDash formats a quantity, or "-" for zero so that the operators doing
// real work stand out.
func orDash(n int64, unit string) string {
	if n == 0 {
		return "-"
	}
	return textfmt.SI(float64(n), unit)
}

// WriteText prints the summary as inlay inspect does: aligned tables.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	s.writeHead(&b)
	b.WriteString("\n")
	s.writeEnds(&b, func(t TensorInfo) string { return graph.Shape(t.Shape).String() })

	ops := textfmt.Table{Header: []string{"OP", "COUNT", "MACS", "FLOPS", "PARAMS"}}
	for _, st := range s.OpStats {
		ops.Add(st.Op, strconv.Itoa(st.Count), orDash(st.MACs, "MAC"), orDash(st.FLOPs, "FLOP"), orDash(st.Params, ""))
	}
	b.WriteString(ops.String())
	b.WriteString("\n")

	totals := textfmt.Table{Align: []textfmt.Align{textfmt.Left, textfmt.Right}}
	totals.Add("nodes", strconv.Itoa(s.Nodes))
	totals.Add("layers", strconv.Itoa(s.Layers))
	totals.Add("params", textfmt.Count(s.Params))
	totals.Add("trainable", textfmt.Count(s.TrainableParams))
	totals.Add("MACs", textfmt.SI(float64(s.MACs), "MAC"))
	totals.Add("FLOPs", textfmt.SI(float64(s.FLOPs), "FLOP"))
	totals.Add("weights", textfmt.Bytes(s.WeightBytes))
	b.WriteString(totals.String())
	fmt.Fprintf(&b, "params: every initializer element, %s (batch-norm statistics included); trainable: %s (without batch-norm statistics, integer constants and scalars)\n",
		digits(s.Params), digits(s.TrainableParams))
	b.WriteString("\n")

	big := textfmt.Table{Header: []string{"LARGEST TENSORS", "DTYPE", "SHAPE", "BYTES"}, Align: []textfmt.Align{textfmt.Left, textfmt.Left, textfmt.Left, textfmt.Right}}
	for _, t := range s.Largest {
		big.Add(t.Name, t.DType, graph.Shape(t.Shape).String(), textfmt.Bytes(t.Bytes))
	}
	b.WriteString(big.String())
	_, err := io.WriteString(w, b.String())
	return err
}

// digits writes n with thousands separators: 25,557,032.
func digits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// sumExprs adds expressions term by term (Unknown if any is).
func sumExprs(es []onnx.Expr) onnx.Expr {
	acc := map[string]*onnx.Term{}
	var keys []string
	for _, e := range es {
		if e.Unknown {
			return onnx.Expr{Unknown: true}
		}
		for _, t := range e.Terms {
			k := strings.Join(t.Syms, "·")
			if acc[k] == nil {
				acc[k] = &onnx.Term{Syms: t.Syms}
				keys = append(keys, k)
			}
			acc[k].Coef += t.Coef
		}
	}
	sort.SliceStable(keys, func(a, b int) bool { return len(acc[keys[a]].Syms) > len(acc[keys[b]].Syms) })
	var out onnx.Expr
	for _, k := range keys {
		if acc[k].Coef != 0 {
			out.Terms = append(out.Terms, *acc[k])
		}
	}
	return out
}

func siNum(unit string) func(float64) string {
	return func(x float64) string { return textfmt.SI(x, unit) }
}

// symShape formats a tensor's dimensions: "1x3xHxW".
func symShape(s *onnx.Symbolic, name string) (string, []string) {
	dims, ok := s.Dims[name]
	if !ok {
		if t := s.Model.Tensors[name]; t != nil && t.Shape != nil && t.Shape.Known() {
			return t.Shape.String(), nil
		}
		return "?", nil
	}
	if len(dims) == 0 {
		return "scalar", []string{}
	}
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = d.FormatDim()
	}
	return strings.Join(parts, "x"), parts
}

// SymbolicSummary is inspect's view of a model with open dimensions.
type SymbolicSummary struct {
	Summary
	Symbols   []string `json:"symbols"`
	Aliases   []string `json:"symbol_aliases,omitempty"`
	MACsExpr  string   `json:"macs_expr"`
	FLOPsExpr string   `json:"flops_expr"`
	Note      string   `json:"note,omitempty"`
	opExprs   map[string][2]string
}

// SummarizeSymbolic builds the summary of a model with open dimensions:
// shapes and work as expressions in its symbols.
func SummarizeSymbolic(s *onnx.Symbolic) *SymbolicSummary {
	m := s.Model
	out := &SymbolicSummary{Symbols: s.Symbols, Aliases: s.Aliases, Note: s.Note, opExprs: map[string][2]string{}}
	out.Summary = Summary{Name: m.Name, Hash: m.Hash, Producer: m.Producer, IRVersion: m.IRVersion, Opset: m.Opset(),
		Nodes: len(m.Nodes), Params: m.Params(), Ops: map[string]int{}, Inputs: []TensorInfo{}, Outputs: []TensorInfo{}}
	if s.Dims != nil {
		if lg, err := graph.BuildLayers(m); err == nil {
			out.Layers = len(lg.Layers)
		}
	}
	ti := func(name string) TensorInfo {
		t := m.Tensors[name]
		text, dims := symShape(s, name)
		info := TensorInfo{Name: name, Dims: dims, ShapeText: text}
		if t != nil {
			info.DType = t.DType.String()
		}
		return info
	}
	for _, n := range m.Inputs {
		out.Inputs = append(out.Inputs, ti(n))
	}
	for _, n := range m.Outputs {
		out.Outputs = append(out.Outputs, ti(n))
	}
	macs, flops := map[string][]onnx.Expr{}, map[string][]onnx.Expr{}
	var all, allF []onnx.Expr
	byOp := tally(m, out.Ops, func(n *graph.Node, st *OpStats) {
		if s.MACs != nil {
			macs[st.Op] = append(macs[st.Op], s.MACs[n.ID])
			flops[st.Op] = append(flops[st.Op], s.FLOPs[n.ID])
			all = append(all, s.MACs[n.ID])
			allF = append(allF, s.FLOPs[n.ID])
		}
	})
	for op, st := range byOp {
		if s.MACs != nil {
			em, ef := sumExprs(macs[op]), sumExprs(flops[op])
			out.opExprs[op] = [2]string{em.Format(siNum("MAC")), ef.Format(siNum("FLOP"))}
			st.MACs, _ = constInt(em)
			st.FLOPs, _ = constInt(ef)
		}
		out.OpStats = append(out.OpStats, *st)
	}
	sort.Slice(out.OpStats, func(i, j int) bool {
		a, b := out.OpStats[i], out.OpStats[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Op < b.Op
	})
	out.MACsExpr, out.FLOPsExpr = "?", "?"
	if s.MACs != nil {
		em, ef := sumExprs(all), sumExprs(allF)
		out.MACsExpr, out.FLOPsExpr = em.Format(siNum("MAC")), ef.Format(siNum("FLOP"))
		out.MACs, _ = constInt(em)
		out.FLOPs, _ = constInt(ef)
	}
	for _, name := range m.SortedTensorNames() {
		if t := m.Tensors[name]; t.Kind == graph.Initializer {
			out.WeightBytes += t.Bytes()
		}
	}
	return out
}

func constInt(e onnx.Expr) (int64, bool) {
	v, ok := e.Const()
	return int64(v), ok
}

// WriteText prints the symbolic summary as inlay inspect does.
func (s *SymbolicSummary) WriteText(w io.Writer) error {
	var b strings.Builder
	s.writeHead(&b)
	fmt.Fprintf(&b, "symbolic dimensions: %s (fix them with --input; shapes and work below are in their terms)\n", strings.Join(s.Symbols, ", "))
	if len(s.Aliases) > 0 {
		fmt.Fprintf(&b, "  named here: %s\n", strings.Join(s.Aliases, ", "))
	}
	if s.Note != "" {
		fmt.Fprintf(&b, "%s\n", s.Note)
	}
	b.WriteString("\n")
	s.writeEnds(&b, func(t TensorInfo) string { return t.ShapeText })
	ops := textfmt.Table{Header: []string{"OP", "COUNT", "MACS", "FLOPS", "PARAMS"}}
	for _, st := range s.OpStats {
		e := s.opExprs[st.Op]
		if e[0] == "" {
			e = [2]string{"?", "?"}
		}
		if e[0] == textfmt.SI(0, "MAC") {
			e[0] = "-"
		}
		if e[1] == textfmt.SI(0, "FLOP") {
			e[1] = "-"
		}
		ops.Add(st.Op, strconv.Itoa(st.Count), e[0], e[1], orDash(st.Params, ""))
	}
	b.WriteString(ops.String())
	b.WriteString("\n")
	totals := textfmt.Table{Align: []textfmt.Align{textfmt.Left, textfmt.Right}}
	totals.Add("nodes", strconv.Itoa(s.Nodes))
	if s.Layers > 0 {
		totals.Add("layers", strconv.Itoa(s.Layers))
	}
	totals.Add("params", textfmt.Count(s.Params))
	totals.Add("MACs", s.MACsExpr)
	totals.Add("FLOPs", s.FLOPsExpr)
	totals.Add("weights", textfmt.Bytes(s.WeightBytes))
	b.WriteString(totals.String())
	_, err := io.WriteString(w, b.String())
	return err
}
