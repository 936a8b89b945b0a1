// Package solvertest holds test helpers for packages that solve with CBC.
package solvertest

import (
	"os"
	"testing"

	"github.com/inlay-dev/inlay/solver"
)

// RequireCBC skips the test when no cbc binary is found, unless
// INLAY_REQUIRE_ASSETS=1 (set by make test), when it fails it.
func RequireCBC(t testing.TB) {
	t.Helper()
	if _, err := solver.Command(); err != nil {
		if os.Getenv("INLAY_REQUIRE_ASSETS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}
