// Package fuzzcheck holds the check the file parsers' fuzz targets share:
// no input makes the parser panic, and every error it returns is one line
// (inlay prints a bad input file's error as one line).
package fuzzcheck

import (
	"strings"
	"testing"
)

// OneLineErrors adds seeds to f's corpus and fuzzes parse, failing on an
// error whose message has a newline (a panic fails by itself).
func OneLineErrors(f *testing.F, parse func(data []byte) error, seeds ...[]byte) {
	f.Helper()
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := parse(data); err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("multi-line error %q", err)
		}
	})
}

// Accepted is OneLineErrors for a parser whose accepted values have more
// to check: check gets each and may fail the test on it.
func Accepted[T any](f *testing.F, parse func(data []byte) (T, error), check func(t *testing.T, v T), seeds ...[]byte) {
	f.Helper()
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parse(data)
		if err != nil {
			OneLine(t, err)
			return
		}
		check(t, v)
	})
}

// OneLine fails the test when err's message has a newline.
func OneLine(t testing.TB, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Fatalf("multi-line error %q", err)
	}
}
