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
