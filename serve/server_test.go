package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	csim "github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/openapi"
)

func phoneZoo(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile("../examples/phone-zoo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// do sends one request to the handler and returns status and body.
func do(t testing.TB, h http.Handler, method, path, body string, hdr ...string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1:8080" // httptest's example.com is not loopback
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:8080", "", true},
		{"[::1]:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"192.168.1.5:8080", "", false},
		{"0.0.0.0:8080", "t", true},
		{"no-port", "", false},
	} {
		err := CheckListen(tc.addr, tc.token)
		if (err == nil) != tc.ok {
			t.Errorf("CheckListen(%q, %q) = %v, want ok=%v", tc.addr, tc.token, err, tc.ok)
		}
	}
}

// TestBadRequests: every bad request gets a 4xx with one line.
func TestBadRequests(t *testing.T) {
	s, err := New(Config{Examples: "../examples", MaxBody: 4096, MaxBudget: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	wl := func(name, yaml string) string {
		return mustJSON(map[string]any{"workload": map[string]string{"name": name, "yaml": yaml}})
	}
	zoo := phoneZoo(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"unknown endpoint", "GET", "/api/nope", "", 404, "no API endpoint"},
		{"unknown example", "GET", "/api/examples/x.yaml", "", 404, "no example"},
		{"empty body", "POST", "/api/validate", "", 400, "empty request body"},
		{"not JSON", "POST", "/api/validate", "{workload", 400, "request body"},
		{"unknown field", "POST", "/api/validate", `{"workload": {"yaml": "x"}, "extra": 1}`, 400, "unknown field"},
		{"trailing data", "POST", "/api/validate", wl("a.yaml", zoo) + "{}", 400, "data after"},
		{"folder in name", "POST", "/api/validate", wl("../a.yaml", zoo), 400, "plain file name"},
		{"not yaml name", "POST", "/api/validate", wl("a.txt", zoo), 400, ".yaml or .yml"},
		{"bad workload", "POST", "/api/validate", wl("a.yaml", "models: 3\n"), 400, "workload: ../examples/a.yaml:1:"},
		{"absolute onnx", "POST", "/api/validate", wl("a.yaml", "platform: phone\nmodels:\n  - {name: m, onnx: /etc/passwd}\ngroups:\n  - {name: g, models: [m], rate_hz: 1}\n"), 400, "outside the examples folder"},
		{"onnx above", "POST", "/api/validate", wl("a.yaml", "platform: phone\nmodels:\n  - {name: m, onnx: ../../x.onnx}\ngroups:\n  - {name: g, models: [m], rate_hz: 1}\n"), 400, "outside the examples folder"},
		{"cache folder", "POST", "/api/validate", wl("a.yaml", "platform: phone\nmodels:\n  - {name: m, onnx: \"cache:../x.onnx\"}\ngroups:\n  - {name: g, models: [m], rate_hz: 1}\n"), 400, "without folders"},
		{"platform path", "POST", "/api/validate", wl("a.yaml", strings.Replace(zoo, "platform: phone", "platform: /etc/p.yaml", 1)), 400, "outside the examples folder"},
		{"unknown preset override", "POST", "/api/validate", mustJSON(map[string]any{"workload": map[string]string{"yaml": zoo, "platform": "/etc/x"}}), 400, "neither a preset"},
		{"too large", "POST", "/api/validate", wl("a.yaml", strings.Repeat("#", 5000)), 413, "over the limit"},
		{"unknown planner", "POST", "/api/plan", mustJSON(map[string]any{"workload": map[string]string{"yaml": zoo}, "planner": "nope"}), 400, "unknown planner"},
		{"budget over cap", "POST", "/api/plan", mustJSON(map[string]any{"workload": map[string]string{"yaml": zoo}, "budget_ms": 60000}), 400, "over this server's limit"},
		{"negative evals", "POST", "/api/plan", mustJSON(map[string]any{"workload": map[string]string{"yaml": zoo}, "evals": -1}), 400, "must not be negative"},
		{"bad plan text", "POST", "/api/simulate", mustJSON(map[string]any{"workload": map[string]string{"yaml": zoo}, "plan": "models: [1"}), 400, "plan: plan.yaml"},
		{"what-if unknown group", "POST", "/api/simulate", mustJSON(map[string]any{"workload": map[string]string{"yaml": zoo}, "plan": "models: []\n", "whatif": map[string]any{"groups": []any{map[string]any{"name": "nope", "rate_hz": 3}}}}), 400, "no group \"nope\""},
		{"what-if bad speed", "POST", "/api/simulate", mustJSON(map[string]any{"workload": map[string]string{"yaml": zoo}, "plan": "models: []\n", "whatif": map[string]any{"processors": []any{map[string]any{"name": "npu", "speed": 1e9}}}}), 400, "want a factor"},
		{"bench too long", "POST", "/api/bench", `{"scenarios": 50, "budget_ms": 5000}`, 400, "over this server's limit"},
		{"bench unknown planner", "POST", "/api/bench", `{"planners": ["x"]}`, 400, "unknown planner"},
		{"platform not a preset", "GET", "/api/platforms/..%2fetc", "", 404, "no platform"},
		{"platform file error", "POST", "/api/platforms", `{"yaml": "name: [x"}`, 400, "hw: ../examples/platform.yaml"},
		{"cancel unknown", "POST", "/api/plan/abc/cancel", "", 404, "no running search"},
		{"recent unknown", "GET", "/api/plans/abc", "", 404, "no recent plan"},
		{"cluster policy", "POST", "/api/cluster/simulate", `{"policy": "nope"}`, 400, "unknown policy"},
		{"cluster preset", "POST", "/api/cluster/simulate", `{"cluster": "/etc/x.yaml"}`, 400, "not a cluster preset"},
		{"cluster trace", "POST", "/api/cluster/simulate", `{"trace": "{bad", "trace_name": "t.jsonl"}`, 400, "cluster/job: t.jsonl:1:"},
		{"cluster jobs", "POST", "/api/cluster/simulate", `{"generate": {"jobs": 100000, "rate_per_hour": 1}}`, 400, "want 1 to 2000"},
		{"inspect nothing", "POST", "/api/inspect", `{}`, 400, "no model"},
		{"inspect outside", "POST", "/api/inspect", `{"model": "/etc/x.onnx"}`, 400, "outside the examples folder"},
		{"inspect above", "POST", "/api/inspect", `{"model": "../../x.onnx"}`, 400, "outside the examples folder"},
		{"inspect unknown", "POST", "/api/inspect", `{"model": "nope"}`, 400, "not a zoo network"},
		{"inspect zoo inputs", "POST", "/api/inspect", `{"model": "resnet50", "inputs": {"x": [1]}}`, 400, "fixed input shapes"},
		{"wrong method", "GET", "/api/validate", "", 404, "no API endpoint GET /api/validate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := do(t, h, tc.method, tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if tc.want == "" {
				return
			}
			var e apiError
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatalf("body %q is not an error object: %v", body, err)
			}
			if !strings.Contains(e.Error, tc.want) || strings.Contains(e.Error, "\n") || strings.Contains(e.Error, "goroutine") {
				t.Errorf("error %q, want one line containing %q", e.Error, tc.want)
			}
		})
	}
}

func TestValidateLine(t *testing.T) {
	s, _ := New(Config{Examples: "../examples"})
	status, body := do(t, s.Handler(), "POST", "/api/validate", mustJSON(map[string]any{"workload": map[string]string{"name": "w.yaml",
		"yaml": "platform: phone\nmodels:\n  - {name: a, zoo: mobilenet_v2}\ngroups:\n  - name: g\n    models: [a]\n    rate_hz: -1\n"}}))
	var e apiError
	_ = json.Unmarshal([]byte(body), &e)
	if status != 400 || e.Line != 7 || !strings.HasPrefix(e.Error, "workload: ../examples/w.yaml:7: ") {
		t.Errorf("status %d, %+v: want 400 at line 7 with the CLI's message", status, e)
	}
}

func TestToken(t *testing.T) {
	s, _ := New(Config{Token: "tok", Examples: "../examples"})
	h := s.Handler()
	if st, body := do(t, h, "GET", "/api/examples", ""); st != 401 || !strings.Contains(body, "missing or wrong token") {
		t.Errorf("no token: %d %s", st, body)
	}
	if st, _ := do(t, h, "GET", "/", ""); st != 401 {
		t.Errorf("page without a token: %d", st)
	}
	if st, _ := do(t, h, "GET", "/api/examples", "", "Authorization", "Bearer nope"); st != 401 {
		t.Errorf("wrong token: %d", st)
	}
	if st, _ := do(t, h, "GET", "/api/examples", "", "Authorization", "Bearer tok"); st != 200 {
		t.Errorf("right token: %d", st)
	}
	if st, _ := do(t, h, "GET", "/api/examples", "", "Cookie", "inlay_token=tok"); st != 200 {
		t.Errorf("cookie: %d", st)
	}
	req := httptest.NewRequest("GET", "/?token=tok", nil)
	req.Host = "192.0.2.1:8080"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" || !strings.Contains(rec.Header().Get("Set-Cookie"), "inlay_token=tok") {
		t.Errorf("?token=: %d, Location %q, Set-Cookie %q", rec.Code, rec.Header().Get("Location"), rec.Header().Get("Set-Cookie"))
	}
}

func TestHostAndOrigin(t *testing.T) {
	s, _ := New(Config{Examples: "../examples"})
	h := s.Handler()
	req := httptest.NewRequest("GET", "/api/examples", nil)
	req.Host = "evil.example:8080"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("foreign Host without a token: %d, want 403", rec.Code)
	}
	if st, _ := do(t, h, "POST", "/api/validate", `{"workload": {"yaml": "x"}}`, "Sec-Fetch-Site", "cross-site"); st != http.StatusForbidden {
		t.Errorf("cross-site POST: %d, want 403", st)
	}
}

func TestPanicIsOneLine(t *testing.T) {
	h := recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	st, body := do(t, h, "GET", "/", "")
	if st != 500 || strings.Contains(body, "goroutine") || !strings.Contains(body, "internal error: boom") {
		t.Errorf("%d %s", st, body)
	}
}

func TestSearchCap(t *testing.T) {
	s, _ := New(Config{Examples: "../examples", MaxSearches: 1})
	s.slots <- struct{}{} // one search running
	st, body := do(t, s.Handler(), "POST", "/api/plan", mustJSON(map[string]any{"workload": map[string]string{"yaml": phoneZoo(t)}, "planner": "bestmap"}))
	if st != http.StatusTooManyRequests || !strings.Contains(body, "already running") {
		t.Errorf("%d %s", st, body)
	}
	<-s.slots
}

func TestPlanAndSimulate(t *testing.T) {
	s, _ := New(Config{Examples: "../examples"})
	h := s.Handler()
	in := map[string]string{"name": "phone-zoo.yaml", "yaml": phoneZoo(t)}
	st, body := do(t, h, "POST", "/api/plan", mustJSON(map[string]any{"workload": in, "planner": "heft"}))
	if st != 200 {
		t.Fatalf("%d %s", st, body)
	}
	var o Outcome
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	mustMatchSchema(t, "Outcome", body)
	boxes, scale := expectedBoxes(t, "../examples/phone-zoo.yaml", "heft")
	n := 0
	for _, sp := range o.Gantt.Spans {
		if wk := o.Gantt.Work[sp.Work]; !wk.Transfer {
			n++
			if wk.DType == "" || wk.Layers == "" || sp.EndMs < sp.StartMs {
				t.Errorf("span without its subgraph's details: %+v", sp)
			}
		}
	}
	if o.MaxScale() != scale || n != boxes || o.UpperBoundScale == nil || *o.UpperBoundScale < scale {
		t.Errorf("plan: scale %v (simulator %v), %d boxes (%d), bound %v", o.MaxScale(), scale, n, boxes, o.UpperBoundScale)
	}
	if o.Explain == nil || len(o.Explain.Models) != 4 {
		t.Errorf("the plan comes without its explanation")
	}
	if st, again := do(t, h, "GET", "/api/plans/"+o.ID, ""); st != 200 || !strings.Contains(again, o.ID) {
		t.Errorf("recent plan: %d", st)
	}
	// Re-simulating the plan as it is gives the same figures.
	st, body = do(t, h, "POST", "/api/simulate", mustJSON(map[string]any{"workload": in, "plan": o.Plan}))
	var same Outcome
	if err := json.Unmarshal([]byte(body), &same); err != nil || st != 200 {
		t.Fatalf("%d %s", st, body)
	}
	mustMatchSchema(t, "Outcome", body)
	if same.MaxScale() != o.MaxScale() {
		t.Errorf("simulate: %v, plan said %v", same.MaxScale(), o.MaxScale())
	}
	// A faster NPU never lowers the plan's proven bound, and its rate by
	// little at most: the dispatch is a list schedule, where a faster
	// processor can reorder the queues and lose some (Graham's anomalies;
	// the refitted phone preset shows 0.8 % here). One taken away is
	// refused.
	speed := mustJSON(map[string]any{"workload": in, "plan": o.Plan, "whatif": map[string]any{"processors": []any{map[string]any{"name": "npu", "speed": 2}}}})
	st, body = do(t, h, "POST", "/api/simulate", speed)
	var fast Outcome
	if err := json.Unmarshal([]byte(body), &fast); err != nil || st != 200 || fast.MaxScale() < 0.95*o.MaxScale() ||
		fast.UpperBoundScale == nil || same.UpperBoundScale == nil || *fast.UpperBoundScale < *same.UpperBoundScale {
		t.Errorf("NPU at 2x: %d, %v (was %v), bound %v (was %v)", st, fast.MaxScale(), o.MaxScale(), fast.UpperBoundScale, same.UpperBoundScale)
	}
	off := mustJSON(map[string]any{"workload": in, "plan": o.Plan, "whatif": map[string]any{"processors": []any{map[string]any{"name": "npu", "off": true}}}})
	if st, body := do(t, h, "POST", "/api/simulate", off); st != 400 || !strings.Contains(body, "re-plan") {
		t.Errorf("NPU off: %d %s", st, body)
	}
	// Re-planning without the NPU gives a plan that does not use it.
	st, body = do(t, h, "POST", "/api/plan", mustJSON(map[string]any{"workload": in, "planner": "heft", "whatif": map[string]any{"processors": []any{map[string]any{"name": "npu", "off": true}}}}))
	var re Outcome
	if err := json.Unmarshal([]byte(body), &re); err != nil || st != 200 || strings.Contains(re.Plan, "processor: npu") {
		t.Errorf("re-plan without the NPU: %d %s", st, body)
	}
}

// events reads server-sent events from a stream.
func events(t testing.TB, r io.Reader, out chan<- [2]string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var ev string
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			ev = e
		} else if d, ok := strings.CutPrefix(line, "data: "); ok {
			out <- [2]string{ev, d}
		}
	}
	close(out)
}

func streamPlan(t *testing.T, ctx context.Context, url, body string) (*http.Response, chan [2]string) {
	t.Helper()
	return streamPost(t, ctx, url+"/api/plan", body)
}

// streamPost posts body to url asking for server-sent events: the
// response (status 200) and its events, the channel closed at its end.
func streamPost(t *testing.T, ctx context.Context, url, body string) (*http.Response, chan [2]string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	ch := make(chan [2]string, 64)
	go events(t, res.Body, ch)
	return res, ch
}

func TestCancelKeepsBest(t *testing.T) {
	s, ts := testServer(t, Config{})
	body := mustJSON(map[string]any{"workload": map[string]string{"yaml": phoneZoo(t)}, "planner": "inlay", "budget_ms": 30000})
	start := time.Now()
	res, ch := streamPlan(t, context.Background(), ts.URL, body)
	defer res.Body.Close()
	var id string
	var result Outcome
	progress := 0
	for ev := range ch {
		switch ev[0] {
		case "start":
			var p Progress
			_ = json.Unmarshal([]byte(ev[1]), &p)
			id = p.ID
		case "progress":
			var p Progress
			_ = json.Unmarshal([]byte(ev[1]), &p)
			progress++
			if p.Evals > 0 && progress == 1 {
				if st, b := do(t, s.Handler(), "POST", "/api/plan/"+id+"/cancel", ""); st != http.StatusAccepted {
					t.Fatalf("cancel: %d %s", st, b)
				}
			} else if progress == 1 {
				progress = 0
			}
		case "result":
			_ = json.Unmarshal([]byte(ev[1]), &result)
		case "error":
			t.Fatalf("error event: %s", ev[1])
		}
	}
	if !result.Cancelled || result.Plan == "" || result.MaxScale() <= 0 {
		t.Errorf("after cancel: cancelled %v, scale %v, plan %d bytes; want the best plan so far", result.Cancelled, result.MaxScale(), len(result.Plan))
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the cancelled search took %v of its 30 s", took)
	}
}

func TestBrowserGoneCancels(t *testing.T) {
	s, ts := testServer(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	body := mustJSON(map[string]any{"workload": map[string]string{"yaml": phoneZoo(t)}, "planner": "inlay", "budget_ms": 30000})
	res, ch := streamPlan(t, ctx, ts.URL, body)
	<-ch // start
	cancel()
	res.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.searches)
		s.mu.Unlock()
		if n == 0 && len(s.slots) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the search still runs %v after its request went away", 10*time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBenchStream(t *testing.T) {
	_, ts := testServer(t, Config{})
	req, _ := http.NewRequest("POST", ts.URL+"/api/bench", strings.NewReader(`{"scenarios": 2, "planners": ["single:npu", "bestmap"], "evals": 1}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	ch := make(chan [2]string, 64)
	go events(t, res.Body, ch)
	rows, results := 0, 0
	for ev := range ch {
		switch ev[0] {
		case "scenario":
			if results > 0 {
				t.Error("a row after the result")
			}
			rows++
		case "result":
			results++
			if !strings.Contains(ev[1], `"summary"`) {
				t.Errorf("result without a summary: %s", ev[1])
			}
			mustMatchSchema(t, "BenchReport", ev[1])
		case "error":
			t.Fatal(ev[1])
		}
	}
	if rows != 2 || results != 1 {
		t.Errorf("%d rows and %d results, want 2 and 1", rows, results)
	}
}

func TestClusterSimulate(t *testing.T) {
	s, _ := New(Config{Examples: "../examples"})
	st, body := do(t, s.Handler(), "POST", "/api/cluster/simulate", `{"policy": "fifo", "generate": {"jobs": 40, "rate_per_hour": 8}}`)
	if st != 200 {
		t.Fatalf("%d %s", st, body)
	}
	mustMatchSchema(t, "ClusterOutcome", body)
	var o struct {
		Jobs     int            `json:"jobs"`
		AvgJCT   float64        `json:"avg_jct_hours"`
		JCTHours []float64      `json:"jct_hours"`
		Timeline []csim.JobLine `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, j := range o.JCTHours {
		sum += j
	}
	if o.Jobs != 40 || len(o.JCTHours) != 40 || len(o.Timeline) != 40 || math.Abs(sum/40-o.AvgJCT) > 1e-9*o.AvgJCT {
		t.Errorf("%d jobs, %d JCTs (mean %v, avg_jct %v), %d timelines", o.Jobs, len(o.JCTHours), sum/40, o.AvgJCT, len(o.Timeline))
	}
}

func TestInspect(t *testing.T) {
	s, _ := New(Config{Examples: "../examples"})
	st, body := do(t, s.Handler(), "POST", "/api/inspect", `{"model": "mobilenet_v2"}`)
	var sum struct {
		Name   string `json:"name"`
		Layers int    `json:"layers"`
		MACs   int64  `json:"macs"`
	}
	if err := json.Unmarshal([]byte(body), &sum); err != nil || st != 200 || sum.Layers == 0 || sum.MACs == 0 {
		t.Errorf("%d %s", st, body)
	}
	mustMatchSchema(t, "ModelSummary", body)
}

// answer asks h, wants 200, checks the answer against openapi.yaml's
// schema and decodes it.
func answer[T any](t *testing.T, h http.Handler, method, path, body, schema string) T {
	t.Helper()
	st, got := do(t, h, method, path, body)
	if st != 200 {
		t.Fatalf("%s %s: %d %s", method, path, st, got)
	}
	mustMatchSchema(t, schema, got)
	var out T
	if err := json.Unmarshal([]byte(got), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// mustMatchSchema checks an answer against openapi.yaml's schema.
func mustMatchSchema(t *testing.T, schema, body string) {
	t.Helper()
	doc, err := openapi.Load(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(schema, []byte(body)); err != nil {
		t.Error(err)
	}
}

// TestPlatformIsTheFile: a platform answers under its file's names (one
// type, hw.File, for YAML and JSON): every preset matches the schema, and
// the answer read back as a platform file gives the same platform.
func TestPlatformIsTheFile(t *testing.T) {
	s, _ := New(Config{Examples: "../examples"})
	h := s.Handler()
	for _, name := range hw.Presets() {
		out := answer[PlatformOut](t, h, "GET", "/api/platforms/"+name, "", "Platform")
		want := hwtest.Preset(t, name)
		var fromJSON, fromPreset bytes.Buffer
		// The JSON's domains carry their processors; the file's names are
		// the rest.
		f := out.File
		f.Domains = nil
		for _, d := range out.Domains {
			f.Domains = append(f.Domains, d.DomainFile)
			if len(d.Processors) == 0 && len(want.Processors) > 0 && len(out.Domains) == 1 {
				t.Errorf("%s: domain %s lists no processors", name, d.Name)
			}
		}
		if err := yaml.NewEncoder(&fromJSON).Encode(f); err != nil {
			t.Fatal(err)
		}
		if err := hw.Encode(&fromPreset, want); err != nil {
			t.Fatal(err)
		}
		got, err := hw.Parse(name+".yaml", fromJSON.Bytes())
		if err != nil {
			t.Fatalf("%s: the answer is not a platform file: %v", name, err)
		}
		var again bytes.Buffer
		if err := hw.Encode(&again, got); err != nil {
			t.Fatal(err)
		}
		if again.String() != fromPreset.String() {
			t.Errorf("%s: the answer read back differs from the preset:\n%s\nwant\n%s", name, again.String(), fromPreset.String())
		}
	}
}
