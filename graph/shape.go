package graph

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Unknown marks a dimension whose size is not (yet) known.
const Unknown int64 = -1

// Shape is a tensor shape; a scalar has an empty, non-nil shape.
type Shape []int64

// Known reports whether every dimension is known.
func (s Shape) Known() bool {
	for _, d := range s {
		if d < 0 {
			return false
		}
	}
	return true
}

// Elements is the product of the dimensions; ok is false when a dimension is
// unknown or the product overflows int64.
func (s Shape) Elements() (n int64, ok bool) {
	n = 1
	for _, d := range s {
		if d < 0 {
			return 0, false
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// Clone returns a copy that shares nothing with s.
func (s Shape) Clone() Shape {
	if s == nil {
		return nil
	}
	return append(Shape{}, s...)
}

// Equal reports whether two shapes are identical.
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// String formats a shape as "1x3x224x224" ("scalar" for rank 0, "?" for an
// unknown dimension).
func (s Shape) String() string {
	if len(s) == 0 {
		return "scalar"
	}
	parts := make([]string, len(s))
	for i, d := range s {
		if d < 0 {
			parts[i] = "?"
		} else {
			parts[i] = strconv.FormatInt(d, 10)
		}
	}
	return strings.Join(parts, "x")
}

// ParseShape reads "1,3,224,224" or "1x3x224x224".
func ParseShape(s string) (Shape, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "scalar" {
		return Shape{}, nil
	}
	sep := ","
	if !strings.Contains(s, ",") {
		sep = "x"
	}
	parts := strings.Split(s, sep)
	out := make(Shape, len(parts))
	for i, p := range parts {
		d, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("bad dimension %q in shape %q", p, s)
		}
		out[i] = d
	}
	return out, nil
}
