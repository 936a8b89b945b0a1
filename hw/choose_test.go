package hw

import "testing"

func TestChoose(t *testing.T) {
	tests := []struct{ given, fromWorkload, want string }{
		{"phone", "desktop", "phone"},
		{"", "desktop", "desktop"},
		{"", "", DefaultPlatform},
	}
	for _, tc := range tests {
		p, err := Choose(tc.given, tc.fromWorkload)
		if err != nil || p.Name != tc.want {
			t.Errorf("Choose(%q, %q) = %v, %v; want %s", tc.given, tc.fromWorkload, p, err, tc.want)
		}
	}
	if _, err := Choose("", "mars"); err == nil {
		t.Error("Choose(\"\", mars): no error")
	}
}
