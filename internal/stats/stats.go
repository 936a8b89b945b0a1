// Package stats holds the small summaries that several packages take of a
// list of numbers or durations: the median, the mean and a nearest-rank
// percentile. None changes its argument.
package stats

import (
	"math"
	"slices"
)

// Number is what Median and Mean take: floats, integers and durations.
type Number interface {
	~float64 | ~float32 | ~int | ~int64
}

// Median is the middle value of xs, the mean of the two middle ones for an
// even count (for integer types, their mean rounded toward zero), and 0
// for none.
func Median[T Number](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Mean is the arithmetic mean of xs, 0 for none.
func Mean[T Number](xs []T) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += float64(x)
	}
	return t / float64(len(xs))
}

// Percentile is the nearest-rank q-quantile (0 < q ≤ 1) of sorted, which
// is in ascending order and not empty: the value of rank ⌈q·n⌉, at least
// the first.
func Percentile[T Number](sorted []T, q float64) T {
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// SumBy is the sum of f over xs.
func SumBy[E any, T Number](xs []E, f func(E) T) T {
	var t T
	for _, x := range xs {
		t += f(x)
	}
	return t
}
