package openapi

import (
	"strings"
	"testing"
)

const doc = `
openapi: 3.1.0
components:
  schemas:
    Run:
      type: object
      additionalProperties: false
      required: [name, groups]
      properties:
        name: {type: string}
        scale: {type: [number, "null"], minimum: 0}
        groups: {type: array, maxItems: 2, items: {$ref: "#/components/schemas/Group"}}
        mode: {type: string, enum: [fast, slow]}
        extra: {type: object, additionalProperties: {type: integer}}
    Group:
      type: object
      properties:
        requests: {type: integer}
`

func TestValidate(t *testing.T) {
	d, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, json string
		want       []string // "" entries: valid
	}{
		{"valid", `{"name": "a", "scale": null, "groups": [{"requests": 3, "other": 1}], "mode": "fast", "extra": {"x": 2}}`, nil},
		{"whole float is an integer", `{"name": "a", "groups": [{"requests": 3.0}]}`, nil},
		{"missing required", `{"groups": []}`, []string{`$: lacks required "name"`}},
		{"unknown property", `{"name": "a", "groups": [], "rate": 1}`, []string{`$: property "rate" is not in the schema`}},
		{"wrong type in a ref", `{"name": "a", "groups": [{"requests": 1.5}]}`, []string{`$.groups[0].requests: want integer, have number`}},
		{"below minimum", `{"name": "a", "groups": [], "scale": -1}`, []string{`$.scale: -1 is below the minimum 0`}},
		{"too many items", `{"name": "a", "groups": [{}, {}, {}]}`, []string{`$.groups: 3 item(s), want at most 2`}},
		{"not in enum", `{"name": "a", "groups": [], "mode": "warp"}`, []string{`$.mode: warp is not one of [fast slow]`}},
		{"additional schema", `{"name": "a", "groups": [], "extra": {"x": "y"}}`, []string{`$.extra.x: want integer, have string`}},
		{"not json", `{"name": `, []string{"unexpected EOF"}},
	} {
		err := d.Validate("Run", []byte(tc.json))
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want %q", tc.name, err, w)
			}
		}
	}
	if err := d.Validate("Nope", []byte(`{}`)); err == nil {
		t.Error("unknown schema: no error")
	}
}

func TestLoadRejectsUnknownKeywords(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"keyword", "components:\n  schemas:\n    A: {type: object, patternProperties: {}}\n", `"patternProperties"`},
		{"nested keyword", "components:\n  schemas:\n    A: {properties: {b: {oneOf: []}}}\n", `A/properties/b: schema keyword "oneOf"`},
		{"dangling ref", "components:\n  schemas:\n    A: {items: {$ref: \"#/components/schemas/B\"}}\n", `unresolved $ref`},
		{"no schemas", "openapi: 3.1.0\n", "no components.schemas"},
		{"not yaml", "components: [\n", "openapi:"},
	} {
		if _, err := Load([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func FuzzValidate(f *testing.F) {
	d, err := Load([]byte(doc))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"name": "a", "groups": [{"requests": 3}]}`))
	f.Add([]byte(`[1, {"a": null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = d.Validate("Run", data) // no panic, no hang
	})
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(doc))
	f.Fuzz(func(t *testing.T, data []byte) {
		if d, err := Load(data); err == nil {
			for _, n := range d.Schemas() {
				_ = d.Validate(n, []byte(`{"a": [1, "x", null]}`))
			}
		}
	})
}
