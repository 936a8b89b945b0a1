package serve

import (
	"errors"
	"strings"
	"testing"
)

// FuzzDecode feeds request bodies to the API's decoding: every body is
// either accepted or refused with a one-line client error, never a panic;
// a workload that decodes then meets the path checks, with the same rule.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"workload": {"name": "w.yaml", "yaml": "platform: phone\nmodels:\n  - {name: m, onnx: ../x.onnx}\ngroups:\n  - {name: g, models: [m], rate_hz: 1}\n"}, "planner": "heft", "budget_ms": 100}`))
	f.Add([]byte(`{"workload": {"yaml": "x"}, "plan": "models: []", "whatif": {"groups": [{"name": "g", "rate_hz": 3}], "processors": [{"name": "npu", "speed": 0.8, "off": true}]}}`))
	f.Add([]byte(`{"scenarios": 3, "planners": ["single:npu", "puzzle:cut=0.01"], "budget_ms": 10}`))
	f.Add([]byte(`{"name": "p.yaml", "yaml": "name: x"}`))
	f.Add([]byte(`{"workload": {"yaml": "platform: /etc/x.yaml\nmodels:\n  - {name: m, onnx: \"cache:a/b\"}\n"}}`))
	f.Add([]byte(`{"model": "gpt:hidden=64,layers=2,heads=4,seq=128,vocab=1000", "gpus": "8xA100-40,8xV100-16", "planners": ["inlay"], "prices": {"A100-40": 1.5}, "objective": "cost"}`))
	f.Add([]byte(`[1, 2`))
	s, err := New(Config{Examples: "../examples"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		targets := []any{&PlanRequest{}, &SimulateRequest{}, &validateRequest{}, &BenchRequest{}, &platformRequest{}, &InspectRequest{}, &ClusterRequest{}, &TrainPlanRequest{}}
		for _, v := range targets {
			err := decodeBytes(data, v)
			if err == nil {
				continue
			}
			var br badRequest
			if !errors.As(err, &br) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%T: error %q is not a client error", v, err)
			}
		}
		var req validateRequest
		if decodeBytes(data, &req) == nil {
			if _, err := s.parse(req.Workload); err != nil {
				var br badRequest
				if !errors.As(err, &br) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("parse: %q is not a one-line client error", err)
				}
			}
		}
	})
}
