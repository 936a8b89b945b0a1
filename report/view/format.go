package view

import (
	"fmt"
	"strconv"
	"time"

	"github.com/inlay-dev/inlay/internal/textfmt"
)

// pct formats a fraction as a percentage, one decimal.
func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// usOf is d in microseconds.
func usOf(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// fmtUS formats d in microseconds, one decimal.
func fmtUS(d time.Duration) string { return fmt.Sprintf("%.1fµs", usOf(d)) }

// fmtMs formats a time in milliseconds, two decimals ("-" for none).
func fmtMs(ms float64) string {
	if ms == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fms", ms)
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ms3 formats d in milliseconds, three decimals.
func ms3(d time.Duration) string { return fmt.Sprintf("%.3f", msOf(d)) }

// kib prints a binary size: "8 MiB", "512 KiB".
func kib(b int64) string {
	switch {
	case b == 0:
		return "0"
	case b%(1<<20) == 0:
		return strconv.FormatInt(b>>20, 10) + " MiB"
	case b%(1<<10) == 0:
		return strconv.FormatInt(b>>10, 10) + " KiB"
	}
	return textfmt.Bytes(b)
}

// dur prints a duration in µs or ms with up to three significant digits.
func dur(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	if d < time.Millisecond {
		return textfmt.SI(float64(d)/1e3, "µs")
	}
	return textfmt.SI(float64(d)/1e6, "ms")
}
