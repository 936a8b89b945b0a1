package app

import (
	"strings"
	"testing"
)

// FuzzFlagValues feeds one string to the parsers of the training and
// cluster commands' list and range flags: none panics, an error is one
// line, and what parses keeps its promise.
func FuzzFlagValues(f *testing.F) {
	for _, s := range []string{"4000:4999", "1.5:48", "5.6,2.6", "A100-40=2,V100-16=1", ":", ",", "-1:2", "1e308:inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		oneLine := func(err error) {
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error of more than one line: %q", s, err)
			}
		}
		w, err := ParseWindow(s)
		oneLine(err)
		if err == nil && (w[0] < 0 || w[1] < w[0]) {
			t.Fatalf("%q: window %v", s, w)
		}
		h, err := ParseHours(s)
		oneLine(err)
		if err == nil && h != nil && !(h[1] > h[0]) {
			t.Fatalf("%q: hours %v", s, h)
		}
		rates, err := ParseRates("rates", s)
		oneLine(err)
		for _, r := range rates {
			if !(r > 0) {
				t.Fatalf("%q: rate %v", s, r)
			}
		}
		prices, err := ParsePrices(s)
		oneLine(err)
		for k, p := range prices {
			if k == "" || !(p > 0) {
				t.Fatalf("%q: price %q=%v", s, k, p)
			}
		}
	})
}
