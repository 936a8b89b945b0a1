// Package testfile writes the small input files tests hand to loaders.
package testfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes text to dir/name, making the folders name needs, and
// returns the file's path; an error fails the test.
func Write(tb testing.TB, dir, name, text string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}
