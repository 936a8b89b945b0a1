package onnx

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// Symbolic is a model inspected with symbolic input dimensions left open.
//
// The shapes and work of a model with symbolic dimensions are found by
// loading it at probe values of its symbols (each symbol at a base value,
// then at twice and three times it with the others at their bases, and
// all at twice their bases when there are several): a dimension or a work
// figure is written as a sum of a constant, a term per symbol and a term
// in the product of all symbols when such a form reproduces every probe
// exactly, else it is unknown ("?"). The structure (nodes, operators,
// params) does not depend on the probes.
type Symbolic struct {
	// Model is the model loaded at the base probe values; its node IDs and
	// tensor names are those of every probe.
	Model *graph.Model
	// Symbols are the open dimensions' names, sorted.
	Symbols []string
	// Aliases say what a symbol renamed from an unreadable or missing
	// dim_param stands for: "N = p2o.DynamicDimension.1".
	Aliases []string
	// Dims gives each tensor's dimensions as expressions, by tensor name.
	Dims map[string][]Expr
	// MACs and FLOPs give each node's work as an expression, by node ID.
	MACs, FLOPs []Expr
	// Note says why shapes are missing when no probe loaded (then Model
	// holds the structure only: nodes, operators and params, no shapes).
	Note string
}

// Term is Coef times the product of Syms (none: a constant).
type Term struct {
	Coef float64
	Syms []string
}

// Expr is a figure in terms of the symbols; Unknown when no form of the
// ones tried reproduces the probes.
type Expr struct {
	Unknown bool
	Terms   []Term
}

// Const reports whether e is a known constant, and its value.
func (e Expr) Const() (float64, bool) {
	if e.Unknown {
		return 0, false
	}
	v := 0.0
	for _, t := range e.Terms {
		if len(t.Syms) > 0 {
			return 0, false
		}
		v += t.Coef
	}
	return v, true
}

// Format writes e with num formatting each coefficient: "3.2 GMAC·H·W",
// "?".
func (e Expr) Format(num func(float64) string) string { return e.format(num, false) }

func (e Expr) format(num func(float64) string, fractions bool) string {
	if e.Unknown {
		return "?"
	}
	if len(e.Terms) == 0 {
		return num(0)
	}
	var parts []string
	for _, t := range e.Terms {
		parts = append(parts, formatTerm(t, num, fractions))
	}
	s := strings.Join(parts, "+")
	return strings.ReplaceAll(s, "+-", "-")
}

// FormatDim writes a dimension: integers and simple fractions of
// symbols, "N", "3·N/512-2".
func (e Expr) FormatDim() string {
	return e.format(func(x float64) string { return strconv.FormatInt(int64(math.Round(x)), 10) }, true)
}

func formatTerm(t Term, num func(float64) string, fractions bool) string {
	if len(t.Syms) == 0 {
		return num(t.Coef)
	}
	syms := strings.Join(t.Syms, "·")
	if p, q, ok := fraction(t.Coef); fractions && ok && math.Abs(float64(p)) < 1e6 {
		s := syms
		switch {
		case p == -1:
			s = "-" + syms
		case p != 1:
			s = strconv.FormatInt(p, 10) + "·" + syms
		}
		if q != 1 {
			s += "/" + strconv.FormatInt(q, 10)
		}
		return s
	}
	return num(t.Coef) + "·" + syms
}

// fraction finds p/q equal to x within 1e-9 relative, q ≤ 1024.
func fraction(x float64) (p, q int64, ok bool) {
	for q = 1; q <= 1024; q++ {
		v := x * float64(q)
		r := math.Round(v)
		if math.Abs(v-r) <= 1e-9*math.Max(1, math.Abs(v)) {
			return int64(r), q, true
		}
	}
	return 0, 0, false
}

// probeBases are tried in turn as the symbols' base probe value until the
// model loads at every probe: multiples of common strides first.
var probeBases = []int64{384, 512, 256, 320, 640, 1024, 128, 64, 32, 16}

// LoadSymbolic reads an ONNX file whose inputs may keep symbolic
// dimensions. fixed gives, per input, its dimensions as written on the
// command line: an integer fixes the dimension, a name or "?" leaves it
// symbolic (a name renames it); inputs not in fixed keep their declared
// shape, with a leading or batch-named symbolic dimension set to 1 as
// Load does. It returns nil, nil when no dimension stays symbolic (load
// with Load then). It never fails for want of shapes: when no probe
// loads, Symbolic.Note says why and Model holds the structure only.
func LoadSymbolic(path string, fixed map[string][]string) (*Symbolic, error) {
	data, decl, err := readDeclared(path)
	if err != nil {
		return nil, err
	}
	// tmpl[input][dim]: a value, or a symbol name.
	type slot struct {
		value int64
		sym   string
	}
	err = eachOverride(decl, fixed, func(n string, d declared, ok bool) error {
		if !ok {
			return fmt.Errorf("--input %s: the model has no input %q", n, n)
		}
		if d.hasShape && len(fixed[n]) != len(d.dims) {
			return fmt.Errorf("--input %s=%s gives %d dimension(s), but the model declares %d (%s)", n, strings.Join(fixed[n], ","), len(fixed[n]), len(d.dims), d.shapeString())
		}
		return nil
	})
	if err != nil {
		return nil, oneLineError(path, err)
	}
	tmpl := map[string][]slot{}
	symSet := map[string]bool{}
	// Unreadable dim_params (exporters' "p2o.DynamicDimension.1", none)
	// become single letters; aliases records what each stands for.
	used := map[string]bool{}
	for _, d := range decl {
		for _, x := range d.dims {
			used[x.param] = true
		}
	}
	for _, f := range fixed {
		for _, x := range f {
			used[x] = true
		}
	}
	renamed := map[string]string{}
	var aliases []string
	for _, d := range decl {
		if !d.hasShape && fixed[d.name] == nil {
			return nil, oneLineError(path, fmt.Errorf("graph input %q has no declared shape; pass --input %s=d0,d1,...", d.name, d.name))
		}
		n := len(d.dims)
		if f := fixed[d.name]; f != nil {
			n = len(f)
		}
		s := make([]slot, n)
		for i := range s {
			var x dim
			if i < len(d.dims) {
				x = d.dims[i]
			}
			if f := fixed[d.name]; f != nil {
				v, err := strconv.ParseInt(f[i], 10, 64)
				switch {
				case err == nil && v >= 0:
					if x.known && x.value != v {
						return nil, oneLineError(path, fmt.Errorf("--input %s: dimension %d is fixed to %d in the model", d.name, i, x.value))
					}
					s[i].value = v
					continue
				case f[i] == "?" || f[i] == "":
					if x.known {
						s[i].value = x.value
						continue
					}
				default:
					if !validSymbol(f[i]) {
						return nil, oneLineError(path, fmt.Errorf("--input %s: dimension %d %q is neither a size nor a symbol name", d.name, i, f[i]))
					}
					if x.known {
						return nil, oneLineError(path, fmt.Errorf("--input %s: dimension %d is fixed to %d in the model", d.name, i, x.value))
					}
					s[i].sym = f[i]
					symSet[f[i]] = true
					continue
				}
			} else if x.known {
				s[i].value = x.value
				continue
			} else if i == 0 || isBatchParam(x.param) {
				s[i].value = 1
				continue
			}
			s[i].sym = x.param
			if !readableSymbol(s[i].sym) {
				key := x.param
				if key == "" {
					key = fmt.Sprintf("%s[%d]", d.name, i)
				}
				if renamed[key] == "" {
					renamed[key] = nextLetter(used)
					aliases = append(aliases, renamed[key]+" = "+key)
				}
				s[i].sym = renamed[key]
			}
			symSet[s[i].sym] = true
		}
		tmpl[d.name] = s
	}
	if len(symSet) == 0 {
		return nil, nil
	}
	syms := slices.Sorted(maps.Keys(symSet))
	shapesAt := func(vals map[string]int64) map[string]graph.Shape {
		out := map[string]graph.Shape{}
		for name, s := range tmpl {
			sh := make(graph.Shape, len(s))
			for i, x := range s {
				sh[i] = x.value
				if x.sym != "" {
					sh[i] = vals[x.sym]
				}
			}
			out[name] = sh
		}
		return out
	}
	var lastErr error
	for _, base := range probeBases {
		points := probePoints(syms, base)
		models := make([]*graph.Model, len(points))
		ok := true
		for i, p := range points {
			m, err := Decode(data, path, Options{Inputs: shapesAt(p)})
			if err != nil {
				lastErr, ok = err, false
				break
			}
			models[i] = m
		}
		if ok {
			sm := fitSymbolic(models, points, syms)
			sm.Aliases = aliases
			return sm, nil
		}
	}
	m, err := decodeStructure(data)
	if err != nil {
		return nil, oneLineError(path, err)
	}
	m.Name = strings.TrimSuffix(baseName(path), ".onnx")
	m.Hash = ContentHash(data)
	note := "shapes unknown: the model loads at no probe value of its symbols"
	if lastErr != nil {
		note += " (" + strings.TrimPrefix(lastErr.Error(), path+": ") + ")"
	}
	return &Symbolic{Model: m, Symbols: syms, Aliases: aliases, Note: note}, nil
}

func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}

// readableSymbol: a short identifier worth showing as is.
func readableSymbol(s string) bool {
	return validSymbol(s) && len(s) <= 12 && !strings.Contains(s, ".")
}

// nextLetter is the first of N, M, K, L, P, Q, R, S, T (then S1, S2, ...)
// not yet used, marking it used.
func nextLetter(used map[string]bool) string {
	for _, l := range []string{"N", "M", "K", "L", "P", "Q", "R", "S", "T"} {
		if !used[l] {
			used[l] = true
			return l
		}
	}
	for i := 1; ; i++ {
		if l := "S" + strconv.Itoa(i); !used[l] {
			used[l] = true
			return l
		}
	}
}

func validSymbol(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '.')) {
			return false
		}
	}
	return true
}

// probePoints: all symbols at base; each at 2·base and 3·base with the
// others at base; with several symbols, all at 2·base.
func probePoints(syms []string, base int64) []map[string]int64 {
	at := func(s string, v int64) map[string]int64 {
		p := map[string]int64{}
		for _, x := range syms {
			p[x] = base
		}
		if s != "" {
			p[s] = v
		}
		return p
	}
	pts := []map[string]int64{at("", 0)}
	for _, s := range syms {
		pts = append(pts, at(s, 2*base), at(s, 3*base))
	}
	if len(syms) > 1 {
		all := map[string]int64{}
		for _, x := range syms {
			all[x] = 2 * base
		}
		pts = append(pts, all)
	}
	return pts
}

// fitSymbolic writes every tensor dimension and node figure of the probe
// models as an expression.
func fitSymbolic(models []*graph.Model, points []map[string]int64, syms []string) *Symbolic {
	base := models[0]
	s := &Symbolic{Model: base, Symbols: syms, Dims: map[string][]Expr{},
		MACs: make([]Expr, len(base.Nodes)), FLOPs: make([]Expr, len(base.Nodes))}
	basis := [][]string{nil}
	for _, x := range syms {
		basis = append(basis, []string{x})
	}
	if len(syms) > 1 {
		basis = append(basis, syms)
	}
	ys := make([]float64, len(points))
	for _, name := range base.SortedTensorNames() {
		t := base.Tensors[name]
		dims := make([]Expr, len(t.Shape))
		for d := range t.Shape {
			okAll := true
			for i, m := range models {
				mt := m.Tensors[name]
				if mt == nil || len(mt.Shape) != len(t.Shape) {
					okAll = false
					break
				}
				ys[i] = float64(mt.Shape[d])
			}
			if !okAll {
				dims[d] = Expr{Unknown: true}
				continue
			}
			dims[d] = fit(basis, points, ys)
		}
		s.Dims[name] = dims
	}
	for id := range base.Nodes {
		for i, m := range models {
			ys[i] = float64(m.Nodes[id].Work.MACs)
		}
		s.MACs[id] = fit(basis, points, ys)
		for i, m := range models {
			ys[i] = float64(m.Nodes[id].Work.FLOPs)
		}
		s.FLOPs[id] = fit(basis, points, ys)
	}
	return s
}

// fit solves ys = Σ c_b · ∏basis_b(point) exactly through the probes, or
// returns Unknown.
func fit(basis [][]string, points []map[string]int64, ys []float64) Expr {
	same := true
	for _, y := range ys[1:] {
		same = same && y == ys[0]
	}
	if same {
		return Expr{Terms: []Term{{Coef: ys[0]}}}
	}
	n := len(basis)
	row := func(p map[string]int64) []float64 {
		r := make([]float64, n)
		for j, b := range basis {
			v := 1.0
			for _, s := range b {
				v *= float64(p[s])
			}
			r[j] = v
		}
		return r
	}
	// Normal equations AᵀA c = Aᵀy (the system is small and well posed).
	ata := make([][]float64, n)
	aty := make([]float64, n)
	for j := range ata {
		ata[j] = make([]float64, n)
	}
	for i, p := range points {
		r := row(p)
		for j := 0; j < n; j++ {
			aty[j] += r[j] * ys[i]
			for k := 0; k < n; k++ {
				ata[j][k] += r[j] * r[k]
			}
		}
	}
	c, ok := solve(ata, aty)
	if !ok {
		return Expr{Unknown: true}
	}
	for i, p := range points {
		r := row(p)
		v := 0.0
		for j := range c {
			v += c[j] * r[j]
		}
		if math.Abs(v-ys[i]) > 1e-6*math.Max(1, math.Abs(ys[i])) {
			return Expr{Unknown: true}
		}
	}
	var e Expr
	for j, b := range basis {
		if math.Abs(c[j]) > 1e-9*math.Max(1, maxAbs(ys)) {
			e.Terms = append(e.Terms, Term{Coef: c[j], Syms: b})
		}
	}
	// Symbol terms first, the constant last: "N/32+1".
	sort.SliceStable(e.Terms, func(a, b int) bool { return len(e.Terms[a].Syms) > len(e.Terms[b].Syms) })
	return e
}

func maxAbs(ys []float64) float64 {
	m := 0.0
	for _, y := range ys {
		m = math.Max(m, math.Abs(y))
	}
	return m
}

// solve is Gaussian elimination with partial pivoting.
func solve(a [][]float64, b []float64) ([]float64, bool) {
	n := len(b)
	for col := 0; col < n; col++ {
		p := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[p][col]) {
				p = r
			}
		}
		if math.Abs(a[p][col]) < 1e-300 {
			return nil, false
		}
		a[col], a[p] = a[p], a[col]
		b[col], b[p] = b[p], b[col]
		for r := col + 1; r < n; r++ {
			f := a[r][col] / a[col][col]
			for k := col; k < n; k++ {
				a[r][k] -= f * a[col][k]
			}
			b[r] -= f * b[col]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}

// declaredInputs reads the graph inputs' declared types.
func declaredInputs(data []byte) ([]declared, error) {
	_, gr, err := parseGraph(data)
	if err != nil {
		return nil, err
	}
	return gr.inputs, nil
}

// decodeStructure decodes nodes and tensors without shapes.
func decodeStructure(data []byte) (*graph.Model, error) {
	m, _, err := parseGraph(data)
	if err != nil {
		return nil, err
	}
	if err := structure(m); err != nil {
		return nil, err
	}
	return m, nil
}

func parseGraph(data []byte) (*graph.Model, *builtGraph, error) {
	if len(data) == 0 {
		return nil, nil, errors.New("empty file, not an ONNX model")
	}
	mp := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		return nil, nil, fmt.Errorf("not a valid ONNX model: %v", err)
	}
	g := mp.GetGraph()
	if g == nil {
		return nil, nil, errors.New("not an ONNX model: it has no graph")
	}
	m := &graph.Model{IRVersion: mp.GetIrVersion(), Producer: mp.GetProducerName()}
	for _, o := range mp.GetOpsetImport() {
		m.Opsets = append(m.Opsets, graph.OpsetImport{Domain: o.GetDomain(), Version: o.GetVersion()})
	}
	gr, err := buildGraph(m, g, 0)
	if err != nil {
		return nil, nil, err
	}
	return m, gr, nil
}

// InputNames lists an ONNX file's graph inputs (initializers left out),
// in the file's order, without decoding its weights or shapes.
func InputNames(path string) ([]string, error) {
	_, decl, err := readDeclared(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(decl))
	for i, d := range decl {
		names[i] = d.name
	}
	return names, nil
}

// readDeclared reads an ONNX file and its graph inputs' declared types;
// errors start with path.
func readDeclared(path string) ([]byte, []declared, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, oneLineError(path, pathCause(err))
	}
	decl, err := declaredInputs(data)
	if err != nil {
		return nil, nil, oneLineError(path, err)
	}
	return data, decl, nil
}
