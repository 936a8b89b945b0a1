// Package named looks plug-ins (planners, policies, presets) up by name in
// the maps that register them, with one wording for a name that is not
// there.
package named

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Names returns the map's names, sorted.
func Names[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Kind says what a map holds, for its errors: the package that reports
// them, the thing and its plural ("search", "planner", "planners").
type Kind struct{ Pkg, What, Plural string }

// Unknown is the error for a name not among names:
// `PKG: unknown WHAT "name" (PLURAL: a, b, c)`.
func (k Kind) Unknown(name string, names []string) error {
	return fmt.Errorf("%s: unknown %s %q (%s: %s)", k.Pkg, k.What, name, k.Plural, strings.Join(names, ", "))
}

// Lookup returns m[key], or Unknown(name) when the map has no such key;
// name is what the user wrote (key may be its lower case or its base).
func Lookup[V any](k Kind, m map[string]V, key, name string) (V, error) {
	v, ok := m[key]
	if !ok {
		return v, k.Unknown(name, Names(m))
	}
	return v, nil
}
