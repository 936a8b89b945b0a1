package perf

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/inlay-dev/inlay/internal/openapi"
)

// TestResultMatchesOpenAPI: inlay-scheduler bench --json (a Result)
// matches serve/openapi.yaml's SchedulerBench, with every field set (so
// that a field the schema does not describe fails) and with only what is
// always written.
func TestResultMatchesOpenAPI(t *testing.T) {
	doc, err := openapi.ReadFile("../../../serve/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var full Result
	fill(reflect.ValueOf(&full).Elem())
	full.Mode = "jobs"
	bare := Result{Mode: "pods", Runs: []Run{{Scheduler: KubeScheduler}}}
	for name, r := range map[string]Result{"full": full, "bare": bare} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate("SchedulerBench", b); err != nil {
			t.Errorf("%s: %v\n%s", name, err, b)
		}
	}
}

// fill sets every field of v to a value that is not zero: numbers 1,
// strings "x", slices one element.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i))
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	}
}
