// Package clischema checks, in a command's tests, that every command of
// a binary with a --json flag has its output described in
// serve/openapi.yaml: the one description the CLI, the web API and the
// agent share.
package clischema

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/internal/openapi"
)

// Check walks root's commands: every one with a --json flag must be a key
// of schemas (its path below root, "cluster bench"), every key must name
// such a command, and every schema a key lists must be in doc.
func Check(t testing.TB, root *cobra.Command, doc *openapi.Doc, schemas map[string][]string) {
	t.Helper()
	bin := root.Name()
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("json") != nil {
			path := strings.TrimPrefix(c.CommandPath(), bin+" ")
			seen[path] = true
			if _, ok := schemas[path]; !ok {
				t.Errorf("%s %s has --json but no schema in jsonSchemas (describe its output in serve/openapi.yaml and check it in a test)", bin, path)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for path, names := range schemas {
		if !seen[path] {
			t.Errorf("jsonSchemas lists %s %s, which has no --json", bin, path)
		}
		for _, s := range names {
			if !slices.Contains(doc.Schemas(), s) {
				t.Errorf("%s %s: serve/openapi.yaml has no schema %s", bin, path, s)
			}
		}
	}
}
