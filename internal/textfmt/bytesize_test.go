package textfmt

import "testing"

func TestParseByteSize(t *testing.T) {
	cases := []struct {
		in   string
		want ByteSize
		str  string
	}{
		{"64MiB", 64 << 20, "64MiB"},
		{"64mib", 64 << 20, "64MiB"},
		{"512KiB", 512 << 10, "512KiB"},
		{"2G", 2 << 30, "2GiB"},
		{"1MB", 1000000, "1000000"},
		{"1000000", 1000000, "1000000"},
		{"4096B", 4096, "4KiB"},
		{" 3 M ", 3 << 20, "3MiB"},
	}
	for _, tc := range cases {
		got, err := ParseByteSize(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseByteSize(%q) = %d (%s), %v; want %d (%s)", tc.in, got, got.String(), err, tc.want, tc.str)
		}
	}
	for _, bad := range []string{"", "MiB", "-1MiB", "0", "1.5MiB", "12XB", "9999999999999GiB"} {
		if got, err := ParseByteSize(bad); err == nil {
			t.Errorf("ParseByteSize(%q) = %d, want an error", bad, got)
		}
	}
}
