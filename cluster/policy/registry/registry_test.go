package registry

import (
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	// The names the issue fixes for scripts.
	for _, n := range []string{"fifo", "las", "srtf", "gandiva", "gavel", "gavel-ss", "ftf", "gavel-ftf", "makespan", "gavel-makespan"} {
		p, err := New(n, Options{Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if p.Name() != n {
			t.Errorf("%s builds a policy called %q", n, p.Name())
		}
	}
	for _, n := range Names() {
		if p, err := New(n, Options{}); err != nil || p.Name() != n {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := New("nope", Options{}); err == nil || !strings.Contains(err.Error(), "gavel-ss") {
		t.Errorf("unknown policy: %v", err)
	}
}
