package textfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var prefixes = []string{"", "k", "M", "G", "T", "P", "E"}

// SI formats x with a decimal SI prefix and three significant digits,
// followed by a space and unit: SI(4.19e9, "MAC") is "4.19 GMAC", SI(512,
// "B") is "512 B", SI(1234, "") is "1.23 k", SI(12, "") is "12". Values below 1000 that are
// whole print without decimals. NaN and infinities print as Go does.
func SI(x float64, unit string) string {
	return strings.TrimRight(si(x, unit), " ")
}

func si(x float64, unit string) string {
	sep := " "
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64) + sep + unit
	}
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	if x < 999.5 {
		if x == math.Trunc(x) {
			return sign + strconv.FormatFloat(x, 'f', 0, 64) + sep + unit
		}
		return sign + Sig3(x) + sep + unit
	}
	k := 0
	for x >= 999.5 && k < len(prefixes)-1 {
		x /= 1000
		k++
	}
	return sign + Sig3(x) + sep + prefixes[k] + unit
}

// Sig3 formats x ≥ 0 with three significant digits ("1.23", "12.3",
// "123"; more digits from 999.5 on, where SI moves to the next prefix).
func Sig3(x float64) string {
	switch {
	case x < 9.995:
		return fmt.Sprintf("%.2f", x)
	case x < 99.95:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

// Count formats a count with an SI prefix and no unit ("3.50 M"); counts
// below 1000 print exactly.
func Count(n int64) string { return SI(float64(n), "") }

// Bytes formats a byte count with a decimal SI prefix ("13.8 MB").
func Bytes(n int64) string { return SI(float64(n), "B") }
