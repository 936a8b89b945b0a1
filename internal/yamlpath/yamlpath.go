// Package yamlpath names places in a YAML document for one-line errors: a
// field path such as nodes[2].gpu, the line it stands on, and the path of
// the deepest key or item on a line. DecodeStrict is the strict decoding
// the input files share.
package yamlpath

import (
	"bytes"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/inlay-dev/inlay/internal/errline"
)

// DecodeStrict decodes the first YAML document of data into v, rejecting
// a field that v does not have (yaml.Decoder.KnownFields); input with no
// document gives io.EOF.
func DecodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// String writes a path of mapping keys (string) and sequence indices (int)
// as "nodes[2].gpu". A key from the file is quoted unless plain
// (errline.Key), so that a line break in it stays escaped.
func String(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch x := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(x) + "]")
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(errline.Key(x))
		}
	}
	return b.String()
}

// Line is the line of the deepest node along path that exists in the
// document: the key's line for a mapping entry, the item's for a sequence
// item, the value's where the path ends on a scalar.
func Line(root *yaml.Node, path []any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		var next *yaml.Node
		switch x := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == x {
						next, line = n.Content[i+1], n.Content[i].Line
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && x >= 0 && x < len(n.Content) {
				next = n.Content[x]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	if n.Kind == yaml.ScalarNode {
		line = n.Line
	}
	return line
}

// At is the path of the deepest key or item on a line, or nil.
func At(root *yaml.Node, line int) []any {
	var best []any
	var walk func(n *yaml.Node, path []any)
	walk = func(n *yaml.Node, path []any) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := append(append([]any{}, path...), k.Value)
				if k.Line == line || v.Line == line {
					best = p
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := append(append([]any{}, path...), i)
				if c.Line == line && best == nil {
					best = p
				}
				walk(c, p)
			}
		}
	}
	walk(root, nil)
	return best
}
