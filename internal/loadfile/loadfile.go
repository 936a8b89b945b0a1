// Package loadfile reads an input file and hands its bytes to the parser
// that names the file in its errors, so that every Load reports a file it
// cannot read the same way: "PKG: open FILE: …".
package loadfile

import (
	"fmt"
	"os"
)

// Read reads path and returns parse(path, its bytes). pkg prefixes a read
// error.
func Read[T any](pkg, path string, parse func(file string, data []byte) (T, error)) (T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", pkg, err)
	}
	return parse(path, data)
}
