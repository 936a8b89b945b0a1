package workload

import (
	"strings"
	"testing"
	"time"
)

const good = `platform: phone
models:
  - {name: det, onnx: models/det.onnx, inputs: {x: [1, 3, 640, 640]}}
  - {name: rec, onnx: models/rec.onnx}
  - {name: face, zoo: mobilenet_v2}
  - {name: kws, zoo: mobilebert}
groups:
  - name: camera
    models: [face, det, rec]
    after: {rec: [det]}
    period_ms: 33.3
  - name: audio
    models: [kws]
    rate_hz: 10
    deadline_ms: 50
    arrival: poisson
`

func TestParse(t *testing.T) {
	w, err := Parse([]byte(good), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w.Platform != "phone" || len(w.Models) != 4 || len(w.Groups) != 2 {
		t.Fatalf("got %+v", w)
	}
	det := w.Model("det")
	if det == nil || det.ONNX != "models/det.onnx" || det.Inputs["x"].String() != "1x3x640x640" {
		t.Errorf("det = %+v", det)
	}
	if f := w.Model("face"); f == nil || f.Source != "zoo:mobilenet_v2" {
		t.Errorf("face = %+v", f)
	}
	cam := w.Group("camera")
	if cam.Period != 33300*time.Microsecond || cam.Deadline != cam.Period || cam.Arrival != Periodic {
		t.Errorf("camera = %+v", cam)
	}
	order, err := cam.Order()
	if err != nil || strings.Join(order, ",") != "face,det,rec" {
		t.Errorf("Order = %v, %v", order, err)
	}
	au := w.Group("audio")
	if au.Period != 100*time.Millisecond || au.Deadline != 50*time.Millisecond || au.Arrival != Poisson || au.RateHz() != 10 {
		t.Errorf("audio = %+v", au)
	}
	if gs := w.GroupsOf("kws"); len(gs) != 1 || gs[0] != au {
		t.Errorf("GroupsOf(kws) = %v", gs)
	}
}

func TestParseErrors(t *testing.T) {
	const models = "models:\n  - {name: a, zoo: resnet50}\n  - {name: b, zoo: resnet50}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"malformed", "models: [", "w.yaml: "},
		{"empty", "", "empty file"},
		{"not a mapping", "- 1", "want a mapping"},
		{"unknown top field", "modles: []", `w.yaml:1: unknown field "modles"`},
		{"no models", "groups: []", "no models"},
		{"unknown model field", "models:\n  - {name: a, zoo: x, foo: 1}\ngroups: []", `w.yaml:2: models[0]: unknown field "foo"`},
		{"both onnx and zoo", "models:\n  - {name: a, zoo: resnet50, onnx: y.onnx}\ngroups: []", "w.yaml:2: models[0] (a): both onnx and zoo"},
		{"unknown zoo name", "models:\n  - {name: a, zoo: resnet51}\ngroups: []", `w.yaml:2: models[0] (a).zoo: unknown network "resnet51"`},
		{"neither onnx nor zoo", "models:\n  - {name: a}\ngroups: []", "w.yaml:2: models[0] (a): neither onnx nor zoo"},
		{"duplicate model", "models:\n  - {name: a, zoo: resnet50}\n  - {name: a, zoo: resnet50}\ngroups: []", `w.yaml:3: models[1] (a): model "a" listed twice`},
		{"no name", "models:\n  - {zoo: x}\ngroups: []", "models[0]: no name"},
		{"bad name", "models:\n  - {name: 'a b', zoo: x}\ngroups: []", "has a space"},
		{"escape in a name", "models:\n  - {name: \"a\\x1bb\", zoo: x}\ngroups: []", `name "a\x1bb" has a space, a control character`},
		{"inputs on zoo", "models:\n  - {name: a, zoo: resnet50, inputs: {x: [1]}}\ngroups: []", "onnx models only"},
		{"negative dim", "models:\n  - {name: a, onnx: a.onnx, inputs: {x: [1, -3]}}\ngroups: []", "models[0] (a).inputs.x[1]: negative dimension -3"},
		{"non-integer dim", "models:\n  - {name: a, onnx: a.onnx, inputs: {x: [1, 2.5]}}\ngroups: []", "want an integer"},
		{"empty groups", models + "groups: []", "groups: empty list"},
		{"model in no group", models + "groups:\n  - {name: g, models: [a], rate_hz: 1}", `w.yaml:3: models: model "b" is in no group`},
		{"unknown model in group", models + "groups:\n  - {name: g, models: [a, b, c], rate_hz: 1}", `w.yaml:5: groups[0] (g).models: unknown model "c"`},
		{"model twice in group", models + "groups:\n  - {name: g, models: [a, a], rate_hz: 1}", `listed twice`},
		{"duplicate group", models + "groups:\n  - {name: g, models: [a, b], rate_hz: 1}\n  - {name: g, models: [a], rate_hz: 1}", `group "g" listed twice`},
		{"rate and period", models + "groups:\n  - {name: g, models: [a, b], rate_hz: 1, period_ms: 3}", "groups[0] (g): both period_ms and rate_hz"},
		{"neither rate nor period", models + "groups:\n  - {name: g, models: [a, b]}", "neither period_ms nor rate_hz"},
		{"zero deadline", models + "groups:\n  - {name: g, models: [a, b], rate_hz: 1, deadline_ms: 0}", "w.yaml:5: groups[0] (g).deadline_ms: must be positive, got 0"},
		{"negative deadline", models + "groups:\n  - {name: g, models: [a, b], rate_hz: 1, deadline_ms: -5}", "deadline_ms: must be positive"},
		{"negative period", models + "groups:\n  - {name: g, models: [a, b], period_ms: -5}", "period_ms: must be positive"},
		{"infinite rate", models + "groups:\n  - {name: g, models: [a, b], rate_hz: .inf}", "rate_hz: bad number"},
		{"tiny rate", models + "groups:\n  - {name: g, models: [a, b], rate_hz: 1e-20}", "longer than"},
		{"string period", models + "groups:\n  - {name: g, models: [a, b], period_ms: fast}", "want a number"},
		{"unknown arrival", models + "groups:\n  - {name: g, models: [a, b], rate_hz: 1, arrival: bursty}", `unknown arrival "bursty"`},
		{"unknown group field", models + "groups:\n  - {name: g, models: [a, b], rate_hz: 1, prio: 1}", `unknown field "prio"`},
		{"cycle", models + "groups:\n  - name: g\n    models: [a, b]\n    after: {a: [b], b: [a]}\n    rate_hz: 1", "w.yaml:7: groups[0] (g).after: dependency cycle"},
		{"self dependency", models + "groups:\n  - name: g\n    models: [a, b]\n    after: {a: [a]}\n    rate_hz: 1", "waits for itself"},
		{"dependency outside group", models + "groups:\n  - {name: g, models: [a], after: {a: [b]}, rate_hz: 1}\n  - {name: h, models: [b], rate_hz: 1}", `after.a: model "b" is not in the group`},
		{"waiter outside group", models + "groups:\n  - {name: g, models: [a], after: {b: [a]}, rate_hz: 1}\n  - {name: h, models: [b], rate_hz: 1}", `after: model "b" is not in the group`},
		{"duplicate field", "models: []\nmodels: []", "w.yaml:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "w.yaml")
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.yaml)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans lines", err)
			}
		})
	}
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name   string
		models []string
		after  map[string][]string
		want   string
	}{
		{"listing order", []string{"c", "a", "b"}, nil, "c,a,b"},
		{"chain", []string{"c", "b", "a"}, map[string][]string{"c": {"b"}, "b": {"a"}}, "a,b,c"},
		{"diamond", []string{"d", "b", "c", "a"}, map[string][]string{"d": {"b", "c"}, "b": {"a"}, "c": {"a"}}, "a,b,c,d"},
		{"cycle", []string{"a", "b", "c"}, map[string][]string{"a": {"c"}, "b": {"a"}, "c": {"b"}}, "error: dependency cycle a -> b -> c -> a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &Group{Name: "g", Models: tc.models, After: tc.after}
			order, err := g.Order()
			got := strings.Join(order, ",")
			if err != nil {
				got = "error: " + strings.TrimPrefix(err.Error(), `group "g": `)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("models:\n  - {name: a, zoo: x}\ngroups:\n  - {name: g, models: [a], after: {a: [a]}, rate_hz: 1}"))
	f.Add([]byte("models: [{name: a, onnx: a.onnx, inputs: {x: [1, 2]}}]\ngroups: [{name: g, models: [a], period_ms: 1e-9}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse(data, "f.yaml")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			return
		}
		for _, g := range w.Groups {
			if g.Period <= 0 || g.Deadline <= 0 {
				t.Errorf("group %q: period %v deadline %v", g.Name, g.Period, g.Deadline)
			}
			if _, err := g.Order(); err != nil {
				t.Errorf("accepted group with %v", err)
			}
			for _, m := range g.Models {
				if w.Model(m) == nil {
					t.Errorf("group %q names unknown %q", g.Name, m)
				}
			}
		}
		for _, m := range w.Models {
			if (m.ONNX == "") == (m.Zoo == "") {
				t.Errorf("model %q: onnx %q zoo %q", m.Name, m.ONNX, m.Zoo)
			}
			if len(w.GroupsOf(m.Name)) == 0 {
				t.Errorf("model %q in no group", m.Name)
			}
		}
	})
}

func TestParseAliases(t *testing.T) {
	w, err := Parse([]byte(`models:
  - {name: a, zoo: resnet50}
groups:
  - {name: g, models: &both [a], rate_hz: &rate 10}
  - {name: h, models: *both, rate_hz: *rate}
`), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if h := w.Group("h"); h == nil || h.Period != 100*time.Millisecond || len(h.Models) != 1 {
		t.Errorf("h = %+v", h)
	}
}
