package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestLoggedBar: off a terminal a bar writes plain lines (no carriage
// returns) saying what it does and how far it is, and nothing before its
// interval has passed.
func TestLoggedBar(t *testing.T) {
	var buf bytes.Buffer
	bar := newLogged(&buf, 10, "simulating", 0)
	Add(bar, 5)
	out := buf.String()
	if strings.Contains(out, "\r") || !strings.HasSuffix(out, "\n") {
		t.Errorf("not plain lines: %q", out)
	}
	if !strings.Contains(out, "simulating") || !strings.Contains(out, "5/10") {
		t.Errorf("line lacks the work or its count: %q", out)
	}
	Done(bar)

	buf.Reset()
	quiet := newLogged(&buf, 10, "simulating", time.Hour)
	Add(quiet, 10)
	Done(quiet)
	if buf.Len() != 0 {
		t.Errorf("short work wrote %q", buf.String())
	}
}
