package yamlpath

import (
	"errors"
	"io"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const doc = `name: c
nodes:
  - gpu: A100
    count: 4
  - gpu: |
      T4
"a b": 1
`

func TestPlaces(t *testing.T) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path []any
		str  string
		line int
	}{
		{nil, "", 1},
		{[]any{"name"}, "name", 1},
		{[]any{"nodes", 0, "count"}, "nodes[0].count", 4},
		{[]any{"nodes", 1, "gpu"}, "nodes[1].gpu", 5},
		{[]any{"nodes", 7, "gpu"}, "nodes[7].gpu", 2}, // no such item: the deepest that exists
		{[]any{"a b"}, `"a b"`, 7},
	} {
		if got := String(c.path); got != c.str {
			t.Errorf("String(%v) = %q, want %q", c.path, got, c.str)
		}
		if got := Line(&root, c.path); got != c.line {
			t.Errorf("Line(%v) = %d, want %d", c.path, got, c.line)
		}
	}
	if got := String(At(&root, 4)); got != "nodes[0].count" {
		t.Errorf("At(4) = %q, want nodes[0].count", got)
	}
	if got := At(&root, 99); got != nil {
		t.Errorf("At(99) = %v, want nil", got)
	}
}

// TestDecodeStrict: known fields decode, an unknown one is an error naming
// it, and no document is io.EOF.
func TestDecodeStrict(t *testing.T) {
	var v struct {
		Name string `yaml:"name"`
	}
	if err := DecodeStrict([]byte("name: c\n"), &v); err != nil || v.Name != "c" {
		t.Errorf("known field: %+v, %v", v, err)
	}
	if err := DecodeStrict([]byte("name: c\nextra: 1\n"), &v); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("unknown field: %v", err)
	}
	if err := DecodeStrict(nil, &v); !errors.Is(err, io.EOF) {
		t.Errorf("empty input: %v, want io.EOF", err)
	}
}
