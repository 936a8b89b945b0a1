package errline

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
)

func TestJSON(t *testing.T) {
	var v struct {
		N int `json:"n"`
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"syntax", "{\n  \"n\": 1,\n}", "line 3: invalid character '}' looking for beginning of object key string"},
		{"type", "{\n\"n\": \"x\"}", "line 2: n: want int, got string"},
		{"top-level type", "\n\n[1]", "line 3: value: want struct { N int \"json:\\\"n\\\"\" }, got array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tc.data), &v)
			if err == nil {
				t.Fatal("no error")
			}
			if got := JSON([]byte(tc.data), err); got != tc.want {
				t.Errorf("JSON = %q, want %q", got, tc.want)
			}
		})
	}
	if got := JSON(nil, errors.New("a\nb")); got != "a; b" {
		t.Errorf("other error: %q", got)
	}
	if got := lineAt([]byte("a\nb\n"), 99); got != 3 {
		t.Errorf("lineAt past the end = %d, want 3", got)
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"x", "x"}, {"input.1", "input.1"}, {"fp16-conv_2", "fp16-conv_2"},
		{"", `""`}, {"a\nb", `"a\nb"`}, {"a b", `"a b"`}, {`a"b`, `"a\"b"`},
	} {
		if got := Key(tc.in); got != tc.want {
			t.Errorf("Key(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestQuoteAll(t *testing.T) {
	if got := QuoteAll([]string{"a", "b\nc"}); got != `"a", "b\nc"` {
		t.Errorf("QuoteAll = %s", got)
	}
	if got := QuoteAll(nil); got != "" {
		t.Errorf("QuoteAll(nil) = %q", got)
	}
}

func TestBadName(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  bool
	}{{"cpu0", false}, {"v100-sxm2_16.g", false}, {"é", false}, {"a b", true}, {"a\tb", true}, {"a\nb", true}, {"a\x1bb", true}, {"a\u00a0b", true}} {
		msg := BadName(tc.name)
		if (msg != "") != tc.bad {
			t.Errorf("BadName(%q) = %q, want bad %v", tc.name, msg, tc.bad)
		}
		if tc.bad && msg != `name `+strconv.Quote(tc.name)+` has a space or a control character` {
			t.Errorf("BadName(%q) = %q", tc.name, msg)
		}
	}
}
