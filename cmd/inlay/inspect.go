package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/zoo"
)

func newInspectCmd() *cobra.Command {
	var inputs []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect MODEL",
		Short: "Show a model's inputs, outputs, operators, work and largest tensors",
		Long: "MODEL is an ONNX file or the name of a zoo network (see inlay zoo list).\n" +
			"Symbolic input dimensions of ONNX files default to 1 where they are the\n" +
			"batch; the others stay symbolic (shapes such as 1xNx512, work per symbol\n" +
			"where it is linear in it) unless --input name=d0,d1,... fixes them\n" +
			"(repeatable; a name or ? in place of a size keeps that dimension open).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sym, err := loadSymbolic(args[0], inputs); err != nil {
				return err
			} else if sym != nil {
				s := summarizeSymbolic(sym)
				if asJSON {
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					return enc.Encode(s)
				}
				return s.writeText(cmd.OutOrStdout())
			}
			m, err := loadModel(args[0], inputs)
			if err != nil {
				return err
			}
			s, err := summarize(m)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			return s.writeText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "shape of a graph input, name=d0,d1,... (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object with exact integers")
	return cmd
}

// parseInputFlags reads --input name=d0,d1,... values.
func parseInputFlags(flags []string) (map[string]graph.Shape, error) {
	out := map[string]graph.Shape{}
	for _, f := range flags {
		i := strings.LastIndex(f, "=")
		if i <= 0 {
			return nil, fmt.Errorf("--input %q: want name=d0,d1,... (e.g. x=1,3,640,640)", f)
		}
		name := f[:i]
		s, err := graph.ParseShape(f[i+1:])
		if err != nil {
			return nil, fmt.Errorf("--input %q: %w", f, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--input %s is given twice", name)
		}
		out[name] = s
	}
	return out, nil
}

// loadSymbolic loads an ONNX file with dimensions left symbolic, or
// returns nil when every dimension has a value (a zoo network, or sizes
// for all).
func loadSymbolic(arg string, inputFlags []string) (*onnx.Symbolic, error) {
	if _, err := os.Stat(arg); err != nil {
		return nil, nil // a zoo name, or loadModel's (one-line) error
	}
	raw, _, err := rawInputFlags(inputFlags)
	if err != nil {
		return nil, err
	}
	return onnx.LoadSymbolic(arg, raw)
}

// loadModel opens an ONNX file, or builds a zoo network when arg is not a
// file but names one.
func loadModel(arg string, inputFlags []string) (*graph.Model, error) {
	shapes, err := parseInputFlags(inputFlags)
	if err != nil {
		return nil, err
	}
	if _, statErr := os.Stat(arg); statErr != nil && !strings.HasSuffix(arg, ".onnx") {
		if _, lookErr := zoo.Lookup(arg); lookErr == nil {
			if len(shapes) > 0 {
				return nil, fmt.Errorf("%s: --input applies to ONNX files; zoo networks have fixed input shapes", arg)
			}
			return zoo.Build(arg)
		}
		return nil, fmt.Errorf("%s: no such file, and not a zoo network (%s)", arg, strings.Join(zoo.Names(), ", "))
	}
	if err := assets.CheckFetched(arg); errors.Is(err, assets.ErrMissing) {
		return nil, err
	}
	return onnx.Load(arg, onnx.Options{Inputs: shapes})
}

// tensorInfo is a tensor as inspect reports it.
type tensorInfo struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape,omitempty"`
	Bytes int64   `json:"bytes,omitempty"`
	// Dims and ShapeText are a symbolic shape's dimensions ("N/32") and text.
	Dims      []string `json:"dims,omitempty"`
	ShapeText string   `json:"-"`
}

// opStats is the work of all nodes of one operator type.
type opStats struct {
	Op     string `json:"op"`
	Count  int    `json:"count"`
	MACs   int64  `json:"macs"`
	FLOPs  int64  `json:"flops"`
	Params int64  `json:"params"`
}

// summary is what inspect prints; its JSON form is the --json output.
type summary struct {
	Name      string       `json:"name"`
	Hash      string       `json:"hash"`
	Producer  string       `json:"producer,omitempty"`
	IRVersion int64        `json:"ir_version"`
	Opset     int64        `json:"opset"`
	Inputs    []tensorInfo `json:"inputs"`
	Outputs   []tensorInfo `json:"outputs"`
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
	OpStats         []opStats      `json:"op_stats"`
	Largest         []tensorInfo   `json:"largest_tensors"`
}

func info(t *graph.Tensor) tensorInfo {
	shape := []int64(t.Shape)
	if shape == nil {
		shape = []int64{}
	}
	return tensorInfo{Name: t.Name, DType: t.DType.String(), Shape: shape}
}

func summarize(m *graph.Model) (*summary, error) {
	lg, err := graph.BuildLayers(m)
	if err != nil {
		return nil, err
	}
	w := m.Totals()
	s := &summary{
		Name: m.Name, Hash: m.Hash, Producer: m.Producer, IRVersion: m.IRVersion, Opset: m.Opset(),
		Nodes: len(m.Nodes), Layers: len(lg.Layers), Params: m.Params(), TrainableParams: m.TrainableParams(), MACs: w.MACs, FLOPs: w.FLOPs,
		Ops: map[string]int{}, Inputs: []tensorInfo{}, Outputs: []tensorInfo{},
	}
	for _, name := range m.Inputs {
		s.Inputs = append(s.Inputs, info(m.Tensors[name]))
	}
	for _, name := range m.Outputs {
		s.Outputs = append(s.Outputs, info(m.Tensors[name]))
	}
	byOp := map[string]*opStats{}
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
		st.MACs += n.Work.MACs
		st.FLOPs += n.Work.FLOPs
		st.Params += n.Work.Params
		s.Ops[op]++
	}
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
	var all []tensorInfo
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

// orDash formats a quantity, or "-" for zero so that the operators doing
// real work stand out.
func orDash(n int64, unit string) string {
	if n == 0 {
		return "-"
	}
	return textfmt.SI(float64(n), unit)
}

func (s *summary) writeText(w io.Writer) error {
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
	fmt.Fprintf(&b, "%s\n\n", strings.Join(meta, ", "))

	ends := textfmt.Table{Header: []string{"", "NAME", "DTYPE", "SHAPE"}, Align: []textfmt.Align{textfmt.Left, textfmt.Left, textfmt.Left, textfmt.Left}}
	for _, t := range s.Inputs {
		ends.Add("input", t.Name, t.DType, graph.Shape(t.Shape).String())
	}
	for _, t := range s.Outputs {
		ends.Add("output", t.Name, t.DType, graph.Shape(t.Shape).String())
	}
	b.WriteString(ends.String())
	b.WriteString("\n")

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
