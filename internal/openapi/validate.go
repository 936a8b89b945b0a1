// Package openapi checks JSON values against the schemas of an OpenAPI
// 3.1 document (serve/openapi.yaml), so that the CLI's --json output, the
// web API and the agent cannot drift from the one description of their
// results.
//
// It knows the subset of JSON Schema the document uses: $ref to
// #/components/schemas, type (one or a list; "integer" wants a whole
// number), properties, required, additionalProperties (false or a schema),
// items, enum, minimum, maximum, minItems, maxItems, and the annotations
// description, default and format. Any other keyword is an error, so the
// document stays inside what is checked.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Doc is a loaded OpenAPI document.
type Doc struct {
	schemas map[string]any
}

// ReadFile is Load of the file at path (tests that cannot import serve
// read serve/openapi.yaml with it).
func ReadFile(path string) (*Doc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(data)
}

// Load reads an OpenAPI document (YAML or JSON).
func Load(data []byte) (*Doc, error) {
	var root map[string]any
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	comps, _ := root["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	if schemas == nil {
		return nil, fmt.Errorf("openapi: the document has no components.schemas")
	}
	d := &Doc{schemas: schemas}
	var errs []string
	for _, name := range d.Schemas() {
		d.lint(schemas[name], "#/components/schemas/"+name, &errs, 0)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapi: %s", strings.Join(errs, "; "))
	}
	return d, nil
}

// lint checks that a schema uses only the keywords check knows and that
// its references resolve.
func (d *Doc) lint(schema any, at string, errs *[]string, depth int) {
	s, ok := schema.(map[string]any)
	if !ok || depth > 64 {
		*errs = append(*errs, fmt.Sprintf("%s: not a schema object", at))
		return
	}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if !known[k] {
			*errs = append(*errs, fmt.Sprintf("%s: schema keyword %q is not one this checker knows", at, k))
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		if name, found := strings.CutPrefix(ref, "#/components/schemas/"); !found || d.schemas[name] == nil {
			*errs = append(*errs, fmt.Sprintf("%s: unresolved $ref %q", at, ref))
		}
	}
	props, _ := s["properties"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		d.lint(props[k], at+"/properties/"+k, errs, depth+1)
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := s[k].(map[string]any); ok {
			d.lint(sub, at+"/"+k, errs, depth+1)
		}
	}
}

// Schemas lists the document's schema names, sorted.
func (d *Doc) Schemas() []string {
	return slices.Sorted(maps.Keys(d.schemas))
}

// Validate checks the JSON value data against the named schema of
// components.schemas. The error lists every violation, each with its
// place in data ("$.groups[0].p50_ms: want number, have string").
func (d *Doc) Validate(schema string, data []byte) error {
	s, ok := d.schemas[schema]
	if !ok {
		return fmt.Errorf("openapi: no schema %q", schema)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	var errs []string
	d.check(s, v, "$", &errs, 0)
	if len(errs) > 0 {
		return fmt.Errorf("openapi: %s: %s", schema, strings.Join(errs, "; "))
	}
	return nil
}

// known are the keywords check understands.
var known = map[string]bool{"$ref": true, "type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "minimum": true, "maximum": true, "minItems": true, "maxItems": true,
	"description": true, "default": true, "format": true}

func (d *Doc) check(schema, v any, at string, errs *[]string, depth int) {
	s, ok := schema.(map[string]any)
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: the schema is not an object", at))
		return
	}
	if depth > 64 {
		*errs = append(*errs, fmt.Sprintf("%s: schema references nest too deep", at))
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/components/schemas/")
		target, ok := d.schemas[name]
		if !found || !ok {
			*errs = append(*errs, fmt.Sprintf("%s: unresolved $ref %q", at, ref))
			return
		}
		d.check(target, v, at, errs, depth+1)
		return
	}
	if t, ok := s["type"]; ok && !typeMatches(t, v) {
		*errs = append(*errs, fmt.Sprintf("%s: want %v, have %s", at, t, kindOf(v)))
		return
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		*errs = append(*errs, fmt.Sprintf("%s: %v is not one of %v", at, v, enum))
	}
	switch x := v.(type) {
	case map[string]any:
		d.checkObject(s, x, at, errs, depth)
	case []any:
		d.checkArray(s, x, at, errs, depth)
	case json.Number:
		checkRange(s, x, at, errs)
	}
}

func (d *Doc) checkObject(s map[string]any, x map[string]any, at string, errs *[]string, depth int) {
	props, _ := s["properties"].(map[string]any)
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if _, ok := x[fmt.Sprint(r)]; !ok {
				*errs = append(*errs, fmt.Sprintf("%s: lacks required %q", at, r))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(x)) {
		if ps, ok := props[k]; ok {
			d.check(ps, x[k], at+"."+k, errs, depth+1)
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				*errs = append(*errs, fmt.Sprintf("%s: property %q is not in the schema", at, k))
			}
		case map[string]any:
			d.check(ap, x[k], at+"."+k, errs, depth+1)
		}
	}
}

func (d *Doc) checkArray(s map[string]any, x []any, at string, errs *[]string, depth int) {
	if n, ok := intOf(s["minItems"]); ok && len(x) < n {
		*errs = append(*errs, fmt.Sprintf("%s: %d item(s), want at least %d", at, len(x), n))
	}
	if n, ok := intOf(s["maxItems"]); ok && len(x) > n {
		*errs = append(*errs, fmt.Sprintf("%s: %d item(s), want at most %d", at, len(x), n))
	}
	if items, ok := s["items"]; ok {
		for i, e := range x {
			d.check(items, e, fmt.Sprintf("%s[%d]", at, i), errs, depth+1)
		}
	}
}

func checkRange(s map[string]any, n json.Number, at string, errs *[]string) {
	v, ok := new(big.Float).SetString(n.String())
	if !ok {
		return
	}
	if lo, ok := floatOf(s["minimum"]); ok && v.Cmp(big.NewFloat(lo)) < 0 {
		*errs = append(*errs, fmt.Sprintf("%s: %s is below the minimum %v", at, n, lo))
	}
	if hi, ok := floatOf(s["maximum"]); ok && v.Cmp(big.NewFloat(hi)) > 0 {
		*errs = append(*errs, fmt.Sprintf("%s: %s is above the maximum %v", at, n, hi))
	}
}

func typeMatches(t, v any) bool {
	switch t := t.(type) {
	case string:
		return isType(t, v)
	case []any:
		return slices.ContainsFunc(t, func(e any) bool { s, _ := e.(string); return isType(s, v) })
	}
	return false
}

func isType(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, ok := new(big.Float).SetString(n.String())
		return ok && f.IsInt()
	}
	return false
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func intOf(v any) (int, bool) {
	n, ok := v.(int)
	return n, ok
}

func floatOf(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
