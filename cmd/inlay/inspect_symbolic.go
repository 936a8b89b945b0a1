package main

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

// rawInputFlags reads --input name=d0,d1,... keeping each dimension as
// written (a size, a symbol name or "?"); ok is false when a value is
// malformed, and all reports whether every dimension is a size.
func rawInputFlags(flags []string) (out map[string][]string, sizes bool, err error) {
	out = map[string][]string{}
	sizes = true
	for _, f := range flags {
		i := strings.LastIndex(f, "=")
		if i <= 0 {
			return nil, false, fmt.Errorf("--input %q: want name=d0,d1,... (e.g. x=1,3,640,640, or x=1,3,H,W to keep symbols)", f)
		}
		name, v := f[:i], strings.TrimSpace(f[i+1:])
		if _, dup := out[name]; dup {
			return nil, false, fmt.Errorf("--input %s is given twice", name)
		}
		sep := ","
		if !strings.Contains(v, ",") {
			sep = "x"
		}
		var dims []string
		if v != "" && v != "scalar" {
			dims = strings.Split(v, sep)
		}
		for j := range dims {
			dims[j] = strings.TrimSpace(dims[j])
			if n, err := strconv.ParseInt(dims[j], 10, 64); err != nil || n < 0 {
				sizes = false
			}
		}
		out[name] = dims
	}
	return out, sizes, nil
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

// symbolicSummary is inspect's view of a model with open dimensions.
type symbolicSummary struct {
	summary
	Symbols   []string `json:"symbols"`
	Aliases   []string `json:"symbol_aliases,omitempty"`
	MACsExpr  string   `json:"macs_expr"`
	FLOPsExpr string   `json:"flops_expr"`
	Note      string   `json:"note,omitempty"`
	opExprs   map[string][2]string
}

func summarizeSymbolic(s *onnx.Symbolic) *symbolicSummary {
	m := s.Model
	out := &symbolicSummary{Symbols: s.Symbols, Aliases: s.Aliases, Note: s.Note, opExprs: map[string][2]string{}}
	out.summary = summary{Name: m.Name, Hash: m.Hash, Producer: m.Producer, IRVersion: m.IRVersion, Opset: m.Opset(),
		Nodes: len(m.Nodes), Params: m.Params(), Ops: map[string]int{}, Inputs: []tensorInfo{}, Outputs: []tensorInfo{}}
	if s.Dims != nil {
		if lg, err := graph.BuildLayers(m); err == nil {
			out.Layers = len(lg.Layers)
		}
	}
	ti := func(name string) tensorInfo {
		t := m.Tensors[name]
		text, dims := symShape(s, name)
		info := tensorInfo{Name: name, Dims: dims, ShapeText: text}
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
	byOp := map[string]*opStats{}
	macs, flops := map[string][]onnx.Expr{}, map[string][]onnx.Expr{}
	var all, allF []onnx.Expr
	for _, n := range m.Nodes {
		op := n.Op
		if n.Domain != "" && n.Domain != "ai.onnx" {
			op = n.Domain + "." + n.Op
		}
		st := byOp[op]
		if st == nil {
			st = &opStats{Op: op}
			byOp[op] = st
		}
		st.Count++
		st.Params += n.Work.Params
		out.Ops[op]++
		if s.MACs != nil {
			macs[op] = append(macs[op], s.MACs[n.ID])
			flops[op] = append(flops[op], s.FLOPs[n.ID])
			all = append(all, s.MACs[n.ID])
			allF = append(allF, s.FLOPs[n.ID])
		}
	}
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

func (s *symbolicSummary) writeText(w io.Writer) error {
	var b strings.Builder
	hash := s.Hash
	if len(hash) > 16 {
		hash = hash[:16]
	}
	fmt.Fprintf(&b, "model %s (sha256 %s)\n", s.Name, hash)
	meta := []string{}
	if s.Producer != "" {
		meta = append(meta, "producer "+s.Producer)
	}
	meta = append(meta, fmt.Sprintf("IR %d", s.IRVersion), fmt.Sprintf("opset %d", s.Opset))
	fmt.Fprintf(&b, "%s\n", strings.Join(meta, ", "))
	fmt.Fprintf(&b, "symbolic dimensions: %s (fix them with --input; shapes and work below are in their terms)\n", strings.Join(s.Symbols, ", "))
	if len(s.Aliases) > 0 {
		fmt.Fprintf(&b, "  named here: %s\n", strings.Join(s.Aliases, ", "))
	}
	if s.Note != "" {
		fmt.Fprintf(&b, "%s\n", s.Note)
	}
	b.WriteString("\n")
	ends := textfmt.Table{Header: []string{"", "NAME", "DTYPE", "SHAPE"}, Align: []textfmt.Align{textfmt.Left, textfmt.Left, textfmt.Left, textfmt.Left}}
	for _, t := range s.Inputs {
		ends.Add("input", t.Name, t.DType, t.ShapeText)
	}
	for _, t := range s.Outputs {
		ends.Add("output", t.Name, t.DType, t.ShapeText)
	}
	b.WriteString(ends.String())
	b.WriteString("\n")
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
