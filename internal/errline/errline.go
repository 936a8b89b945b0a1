// Package errline turns decoding errors into the one-line messages inlay
// prints for bad input files: a JSON error with the line it points at, and
// any error with its newlines folded.
package errline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// OneLine is err's message with its newlines folded into "; ".
func OneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// JSON turns an encoding/json decoding error of data into one line, "line
// N: …" where the error gives an offset: a syntax error as it reads, a
// value of the wrong type as "field: want T, got V". Other errors are
// OneLine.
func JSON(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("line %d: %v", lineAt(data, se.Offset), se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("line %d: %s: want %s, got %s", lineAt(data, te.Offset), field, te.Type, te.Value)
	}
	return OneLine(err)
}

// lineAt is the 1-based line of data that byte offset falls on (the last
// line for an offset past the end).
func lineAt(data []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(data)))
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// Key writes a key from a user's file (a map key, an input name) for the
// place of an error: as is when it is plain (a non-empty run of letters,
// digits, '_', '-' and '.'), else quoted (strconv.Quote), so that a line
// break or a space in it stays escaped and visible.
func Key(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// QuoteAll lists names from a user's file Go-quoted ("a", "b"), so that a
// name holding a line break or a control byte cannot split the one-line
// error it is named in.
func QuoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// BadName says what is wrong with a user's name for a thing (a platform,
// processor, cluster, GPU type, node group, model or group), "" when
// nothing: a space or a control character, which would split or garble
// the one-line errors and tables that print it. Callers may refuse more.
func BadName(name string) string {
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Sprintf("name %q has a space or a control character", name)
		}
	}
	return ""
}
