package train

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedTraining is the path of a file of the shared training data (the
// shared/ folder beside the repository), or, when it is missing, a
// skipped test — a failed one under INLAY_REQUIRE_ASSETS=1.
func sharedTraining(t testing.TB, rel string) string {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "training", rel)
	if _, err := os.Stat(path); err != nil {
		msg := "shared/training/" + rel + " is missing: put the project's shared data folder beside the repository (../shared)"
		if os.Getenv("INLAY_REQUIRE_ASSETS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}
