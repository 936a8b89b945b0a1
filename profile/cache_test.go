package profile

import "testing"

func TestParseCacheSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"32K", 32 << 10, true},
		{"32768K", 32 << 20, true},
		{"1M", 1 << 20, true},
		{"2m", 2 << 20, true},
		{"512", 512, true},
		{"1G", MaxCacheBytes, true},
		{"999999999999K", MaxCacheBytes, true},
		{"", 0, false},
		{"K", 0, false},
		{"-4K", 0, false},
		{"0K", 0, false},
		{"lots", 0, false},
	} {
		got, ok := parseCacheSize(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseCacheSize(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if n := CacheBytes(0); n <= 0 || n > MaxCacheBytes {
		t.Errorf("CacheBytes(0) = %d", n)
	}
}
