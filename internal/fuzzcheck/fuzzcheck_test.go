package fuzzcheck

import (
	"errors"
	"testing"
)

// FuzzOneLine runs the check on a parser whose errors are one line; its
// seeds run under go test.
func FuzzOneLine(f *testing.F) {
	OneLineErrors(f, func(data []byte) error {
		if len(data) == 0 {
			return errors.New("empty input")
		}
		return nil
	}, []byte(""), []byte("x"))
}

// FuzzAccepted runs Accepted on the same parser, checking what it
// accepts.
func FuzzAccepted(f *testing.F) {
	Accepted(f, func(data []byte) (int, error) {
		if len(data) == 0 {
			return 0, errors.New("empty input")
		}
		return len(data), nil
	}, func(t *testing.T, n int) {
		if n <= 0 {
			t.Fatalf("accepted %d bytes", n)
		}
	}, []byte(""), []byte("x"))
}
