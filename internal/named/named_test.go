package named

import "testing"

func TestLookup(t *testing.T) {
	m := map[string]int{"b": 2, "a": 1, "c": 3}
	if got := Names(m); len(got) != 3 || got[0] != "a" || got[2] != "c" {
		t.Errorf("Names = %v", got)
	}
	k := Kind{"search", "planner", "planners"}
	if v, err := Lookup(k, m, "b", "B"); v != 2 || err != nil {
		t.Errorf("Lookup(b) = %d, %v", v, err)
	}
	_, err := Lookup(k, m, "x", "X:1")
	if err == nil || err.Error() != `search: unknown planner "X:1" (planners: a, b, c)` {
		t.Errorf("Lookup(x) error = %v", err)
	}
}
