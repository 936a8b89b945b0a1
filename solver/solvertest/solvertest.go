// Package solvertest holds test helpers for packages that solve with CBC.
package solvertest

import (
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/solver"
)

// RequireCBC skips the test when no cbc binary is found, unless
// INLAY_REQUIRE_ASSETS=1 (set by make test), when it fails it with
// solver.ErrNoCBC's one line (how to install CBC).
func RequireCBC(t testing.TB) {
	t.Helper()
	if _, err := solver.Command(); err != nil {
		assets.Missing(t, err.Error())
	}
}
