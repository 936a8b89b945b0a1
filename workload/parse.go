package workload

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/zoo"
	"go.yaml.in/yaml/v3"
)

// maxDuration bounds periods and deadlines (a day) so that conversions to
// time.Duration never overflow.
const maxDuration = 24 * time.Hour

// Parse reads a workload from YAML without loading its models. file names
// the source in errors (and relative ONNX paths are kept as written).
func Parse(data []byte, file string) (*Workload, error) {
	p := &parser{file: file}
	w, err := p.parse(data)
	if err != nil {
		return nil, err
	}
	w.Path = file
	return w, nil
}

type parser struct{ file string }

// errAt formats one error line naming the file, the line (when known) and
// the place.
func (p *parser) errAt(n *yaml.Node, place, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if place != "" {
		msg = place + ": " + msg
	}
	if n != nil && n.Line > 0 {
		return fmt.Errorf("workload: %s:%d: %s", p.file, n.Line, msg)
	}
	return fmt.Errorf("workload: %s: %s", p.file, msg)
}

func (p *parser) parse(data []byte) (*Workload, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("workload: %s: %s", p.file, oneLine(err))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, p.errAt(nil, "", "empty file")
	}
	root := doc.Content[0]
	fields, err := p.mapping(root, "", "platform", "precision", "models", "groups")
	if err != nil {
		return nil, err
	}
	w := &Workload{}
	if n := fields["precision"]; n != nil {
		if w.Precision, err = p.precision(n, "precision"); err != nil {
			return nil, err
		}
	}
	if n := fields["platform"]; n != nil {
		if w.Platform, err = p.str(n, "platform"); err != nil {
			return nil, err
		}
	}
	models := fields["models"]
	if models == nil {
		return nil, p.errAt(root, "", "no models")
	}
	if err := p.models(w, models); err != nil {
		return nil, err
	}
	groups := fields["groups"]
	if groups == nil {
		return nil, p.errAt(root, "", "no groups")
	}
	if err := p.groups(w, groups); err != nil {
		return nil, err
	}
	for _, m := range w.Models {
		if len(w.GroupsOf(m.Name)) == 0 {
			return nil, p.errAt(&yaml.Node{Line: m.line}, "models", "model %q is in no group", m.Name)
		}
	}
	return w, nil
}

func (p *parser) models(w *Workload, n *yaml.Node) error {
	items, err := p.nonEmptySeq(n, "models")
	if err != nil {
		return err
	}
	for i, item := range items {
		place := fmt.Sprintf("models[%d]", i)
		f, err := p.mapping(item, place, "name", "onnx", "zoo", "inputs", "input", "precision")
		if err != nil {
			return err
		}
		m := &Model{line: item.Line}
		if f["name"] == nil {
			return p.errAt(item, place, "no name")
		}
		if m.Name, err = p.name(f["name"], place+".name"); err != nil {
			return err
		}
		place = fmt.Sprintf("models[%d] (%s)", i, m.Name)
		if w.Model(m.Name) != nil {
			return p.errAt(f["name"], place, "model %q listed twice", m.Name)
		}
		if f["onnx"] != nil {
			if m.ONNX, err = p.str(f["onnx"], place+".onnx"); err != nil {
				return err
			}
			if m.ONNX == "" {
				return p.errAt(f["onnx"], place+".onnx", "empty path")
			}
		}
		if f["zoo"] != nil {
			if m.Zoo, err = p.str(f["zoo"], place+".zoo"); err != nil {
				return err
			}
			if _, err := zoo.Lookup(m.Zoo); err != nil {
				return p.errAt(f["zoo"], place+".zoo", "%s", strings.TrimPrefix(err.Error(), "zoo: "))
			}
		}
		switch {
		case f["onnx"] != nil && f["zoo"] != nil:
			return p.errAt(item, place, "both onnx and zoo given; give one")
		case f["onnx"] == nil && f["zoo"] == nil:
			return p.errAt(item, place, "neither onnx nor zoo given; give one")
		}
		if m.Zoo != "" {
			m.Source = "zoo:" + m.Zoo
		} else {
			m.Source = m.ONNX
		}
		if n := f["precision"]; n != nil {
			if m.Precision, err = p.precision(n, place+".precision"); err != nil {
				return err
			}
		}
		m.defaultPrecision = w.Precision
		if in := f["input"]; in != nil {
			if m.Zoo == "" {
				return p.errAt(in, place+".input", "input applies to zoo networks; onnx models take inputs: {name: [d0, d1, ...]}")
			}
			if m.ZooInput, err = p.dims(in, place+".input"); err != nil {
				return err
			}
			spec, _ := zoo.Lookup(m.Zoo)
			if err := spec.CheckInput(m.ZooInput); err != nil {
				return p.errAt(in, place+".input", "%s", strings.TrimPrefix(err.Error(), "zoo: "))
			}
		}
		if in := f["inputs"]; in != nil {
			if m.Zoo != "" {
				return p.errAt(in, place+".inputs", "inputs apply to onnx models only (a zoo network takes input: [1, 3, H, W])")
			}
			if m.Inputs, err = p.shapes(in, place+".inputs"); err != nil {
				return err
			}
		}
		w.Models = append(w.Models, m)
	}
	return nil
}

func (p *parser) shapes(n *yaml.Node, place string) (map[string]graph.Shape, error) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, p.errAt(n, place, "want a mapping of input name to shape")
	}
	out := map[string]graph.Shape{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, err := p.str(k, place)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, p.errAt(k, place, "input %q given twice", name)
		}
		s, err := p.dims(v, place+"."+errline.Key(name))
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

// dims reads a shape: a list of non-negative integers.
func (p *parser) dims(v *yaml.Node, place string) (graph.Shape, error) {
	dims, err := p.seq(v, place)
	if err != nil {
		return nil, err
	}
	s := make(graph.Shape, len(dims))
	for j, d := range dims {
		x, err := p.int(d, fmt.Sprintf("%s[%d]", place, j))
		if err != nil {
			return nil, err
		}
		if x < 0 {
			return nil, p.errAt(d, fmt.Sprintf("%s[%d]", place, j), "negative dimension %d", x)
		}
		s[j] = x
	}
	return s, nil
}

// precision reads a list of processor data types: [int8, float16].
func (p *parser) precision(n *yaml.Node, place string) ([]graph.DType, error) {
	items, err := p.seq(n, place)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, p.errAt(n, place, "empty list (give the data types the model may run in, e.g. [float16] or [int8, float16])")
	}
	var out []graph.DType
	for j, it := range items {
		at := fmt.Sprintf("%s[%d]", place, j)
		name, err := p.str(it, at)
		if err != nil {
			return nil, err
		}
		d, err := graph.ParseDType(name)
		if err != nil || !(d.IsFloat() || d.IsQuantized() || d == graph.Int32) {
			return nil, p.errAt(it, at, "%q is not a processor data type (float32, float16, bfloat16, int8, int16, int4, float8e4m3fn, ...)", name)
		}
		d = d.ComputeType()
		for _, x := range out {
			if x == d {
				return nil, p.errAt(it, at, "%s listed twice", d)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

func (p *parser) groups(w *Workload, n *yaml.Node) error {
	items, err := p.nonEmptySeq(n, "groups")
	if err != nil {
		return err
	}
	for i, item := range items {
		place := fmt.Sprintf("groups[%d]", i)
		f, err := p.mapping(item, place, "name", "models", "after", "period_ms", "rate_hz", "deadline_ms", "arrival")
		if err != nil {
			return err
		}
		g := &Group{After: map[string][]string{}, Arrival: Periodic}
		if f["name"] == nil {
			return p.errAt(item, place, "no name")
		}
		if g.Name, err = p.name(f["name"], place+".name"); err != nil {
			return err
		}
		place = fmt.Sprintf("groups[%d] (%s)", i, g.Name)
		if w.Group(g.Name) != nil {
			return p.errAt(f["name"], place, "group %q listed twice", g.Name)
		}
		if f["models"] == nil {
			return p.errAt(item, place, "no models")
		}
		ms, err := p.nonEmptySeq(f["models"], place+".models")
		if err != nil {
			return err
		}
		in := map[string]bool{}
		for j, mn := range ms {
			name, err := p.str(mn, fmt.Sprintf("%s.models[%d]", place, j))
			if err != nil {
				return err
			}
			if w.Model(name) == nil {
				return p.errAt(mn, place+".models", "unknown model %q", name)
			}
			if in[name] {
				return p.errAt(mn, place+".models", "model %q listed twice", name)
			}
			in[name] = true
			g.Models = append(g.Models, name)
		}
		if a := f["after"]; a != nil {
			a = deref(a)
			if a.Kind != yaml.MappingNode {
				return p.errAt(a, place+".after", "want a mapping of model to the models it waits for")
			}
			for j := 0; j+1 < len(a.Content); j += 2 {
				k, v := a.Content[j], a.Content[j+1]
				waiter, err := p.str(k, place+".after")
				if err != nil {
					return err
				}
				if !in[waiter] {
					return p.errAt(k, place+".after", "model %q is not in the group", waiter)
				}
				if _, dup := g.After[waiter]; dup {
					return p.errAt(k, place+".after", "model %q given twice", waiter)
				}
				deps, err := p.seq(v, place+".after."+waiter)
				if err != nil {
					return err
				}
				list := []string{}
				for _, d := range deps {
					dep, err := p.str(d, place+".after."+waiter)
					if err != nil {
						return err
					}
					if !in[dep] {
						return p.errAt(d, place+".after."+waiter, "model %q is not in the group", dep)
					}
					if dep == waiter {
						return p.errAt(d, place+".after."+waiter, "model %q waits for itself", dep)
					}
					for _, x := range list {
						if x == dep {
							return p.errAt(d, place+".after."+waiter, "model %q listed twice", dep)
						}
					}
					list = append(list, dep)
				}
				g.After[waiter] = list
			}
			if _, err := g.Order(); err != nil {
				return p.errAt(a, place+".after", "%s", strings.TrimPrefix(err.Error(), fmt.Sprintf("group %q: ", g.Name)))
			}
		}
		period, rate := f["period_ms"], f["rate_hz"]
		switch {
		case period != nil && rate != nil:
			return p.errAt(item, place, "both period_ms and rate_hz given; give one")
		case period == nil && rate == nil:
			return p.errAt(item, place, "neither period_ms nor rate_hz given; give one")
		case period != nil:
			ms, err := p.positive(period, place+".period_ms")
			if err != nil {
				return err
			}
			if g.Period, err = p.duration(period, place+".period_ms", ms*float64(time.Millisecond)); err != nil {
				return err
			}
		default:
			hz, err := p.positive(rate, place+".rate_hz")
			if err != nil {
				return err
			}
			if g.Period, err = p.duration(rate, place+".rate_hz", float64(time.Second)/hz); err != nil {
				return err
			}
		}
		g.Deadline = g.Period
		if d := f["deadline_ms"]; d != nil {
			ms, err := p.positive(d, place+".deadline_ms")
			if err != nil {
				return err
			}
			if g.Deadline, err = p.duration(d, place+".deadline_ms", ms*float64(time.Millisecond)); err != nil {
				return err
			}
		}
		if a := f["arrival"]; a != nil {
			if g.Arrival, err = p.str(a, place+".arrival"); err != nil {
				return err
			}
			if g.Arrival != Periodic && g.Arrival != Poisson {
				return p.errAt(a, place+".arrival", "unknown arrival %q (want periodic or poisson)", g.Arrival)
			}
		}
		w.Groups = append(w.Groups, g)
	}
	return nil
}

// mapping checks that n is a mapping whose keys are all allowed and given
// once, and returns key → value.
func (p *parser) mapping(n *yaml.Node, place string, allowed ...string) (map[string]*yaml.Node, error) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, p.errAt(n, place, "want a mapping, got %s", kindName(n))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			return nil, p.errAt(k, place, "want a field name, got %s", kindName(k))
		}
		ok := false
		for _, a := range allowed {
			if k.Value == a {
				ok = true
			}
		}
		if !ok {
			return nil, p.errAt(k, place, "unknown field %q (want one of %s)", k.Value, strings.Join(allowed, ", "))
		}
		if out[k.Value] != nil {
			return nil, p.errAt(k, place, "field %q given twice", k.Value)
		}
		out[k.Value] = n.Content[i+1]
	}
	return out, nil
}

func (p *parser) seq(n *yaml.Node, place string) ([]*yaml.Node, error) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		return nil, p.errAt(n, place, "want a list, got %s", kindName(n))
	}
	return n.Content, nil
}

// nonEmptySeq is seq of a list that must have an item.
func (p *parser) nonEmptySeq(n *yaml.Node, place string) ([]*yaml.Node, error) {
	items, err := p.seq(n, place)
	if err == nil && len(items) == 0 {
		err = p.errAt(n, place, "empty list")
	}
	return items, err
}

func (p *parser) str(n *yaml.Node, place string) (string, error) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!int" && n.Tag != "!!float") {
		return "", p.errAt(n, place, "want a string, got %s", kindName(n))
	}
	return n.Value, nil
}

// name reads a model or group name: non-empty, without spaces or the
// characters plan files and CLI flags use as separators.
func (p *parser) name(n *yaml.Node, place string) (string, error) {
	s, err := p.str(n, place)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", p.errAt(n, place, "empty name")
	}
	if errline.BadName(s) != "" || strings.ContainsAny(s, ":,/") {
		return "", p.errAt(n, place, "name %q has a space, a control character or one of : , /", s)
	}
	return s, nil
}

func (p *parser) int(n *yaml.Node, place string) (int64, error) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, p.errAt(n, place, "want an integer, got %s", kindName(n))
	}
	x, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil {
		return 0, p.errAt(n, place, "bad integer %q", n.Value)
	}
	return x, nil
}

func (p *parser) positive(n *yaml.Node, place string) (float64, error) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return 0, p.errAt(n, place, "want a number, got %s", kindName(n))
	}
	x, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		return 0, p.errAt(n, place, "bad number %q", n.Value)
	}
	if math.IsNaN(x) || x <= 0 {
		return 0, p.errAt(n, place, "must be positive, got %s", n.Value)
	}
	return x, nil
}

func (p *parser) duration(n *yaml.Node, place string, ns float64) (time.Duration, error) {
	if math.IsInf(ns, 0) || ns > float64(maxDuration) {
		return 0, p.errAt(n, place, "%s is longer than %v", n.Value, maxDuration)
	}
	d := time.Duration(math.Round(ns))
	if d <= 0 {
		return 0, p.errAt(n, place, "%s is shorter than a nanosecond", n.Value)
	}
	return d, nil
}

// deref follows YAML aliases (*name) to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

// oneLine flattens a YAML library error into one line.
func oneLine(err error) string {
	return strings.TrimPrefix(errline.OneLine(err), "yaml: ")
}

// resolve returns path relative to the folder of file, unless it is absolute.
func resolve(file, path string) string {
	if filepath.IsAbs(path) || file == "" {
		return path
	}
	return filepath.Join(filepath.Dir(file), path)
}
