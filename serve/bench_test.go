package serve

import (
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inlay-dev/inlay/workload"
)

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// planVia plans a workload through the API and returns its outcome.
func planVia(b *testing.B, s *Server, name, yaml string, req map[string]any) Outcome {
	b.Helper()
	req["workload"] = map[string]string{"name": name, "yaml": yaml}
	st, body := do(b, s.Handler(), "POST", "/api/plan", mustJSON(req))
	if st != 200 {
		b.Fatalf("%d %s", st, body)
	}
	var o Outcome
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		b.Fatal(err)
	}
	return o
}

// BenchmarkPlanViewRender: a plan of the nine zoo networks opened in the
// plan view of headless Chromium; ms-to-gantt is the median time from the
// navigation's start to the frame after the Gantt chart is drawn.
func BenchmarkPlanViewRender(b *testing.B) {
	ctx := browser(b)
	s, ts := testServer(b, Config{})
	yaml, err := os.ReadFile("testdata/nine.yaml")
	if err != nil {
		b.Fatal(err)
	}
	o := planVia(b, s, "nine.yaml", string(yaml), map[string]any{"planner": "heft"})
	boxes := 0
	for _, sp := range o.Gantt.Spans {
		if !o.Gantt.Work[sp.Work].Transfer {
			boxes++
		}
	}
	var times, built []float64
	for b.Loop() {
		var painted, drawn string
		run(b, ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/#view/"+o.ID))
		settle(b, ctx, `document.body.dataset.painted`)
		run(b, ctx, chromedp.Evaluate(`document.body.dataset.painted`, &painted), chromedp.Evaluate(`document.body.dataset.drawn`, &drawn))
		p, _ := strconv.ParseFloat(painted, 64)
		d, _ := strconv.ParseFloat(drawn, 64)
		times, built = append(times, p), append(built, d)
	}
	b.ReportMetric(median(times), "ms-to-gantt")
	b.ReportMetric(median(built), "ms-to-dom")
	b.ReportMetric(float64(boxes), "boxes")
	b.ReportMetric(float64(len(o.Gantt.Spans)-boxes), "transfers")
}

// BenchmarkWhatIf: the demo workload's inlay plan re-simulated with the
// camera at 30 Hz and the NPU 20 % slower (POST /api/simulate, no search).
func BenchmarkWhatIf(b *testing.B) {
	s, err := New(Config{Examples: "../examples"})
	if err != nil {
		b.Fatal(err)
	}
	demo, _ := workload.DemoYAML("phone", false)
	o := planVia(b, s, demoName, demo, map[string]any{"planner": "inlay", "budget_ms": 3000})
	req := mustJSON(map[string]any{"workload": map[string]string{"name": demoName, "yaml": demo}, "plan": o.Plan,
		"whatif": map[string]any{"groups": []any{map[string]any{"name": "camera", "rate_hz": 30}},
			"processors": []any{map[string]any{"name": "npu", "speed": 0.8}}}})
	h := s.Handler()
	for b.Loop() {
		if st, body := do(b, h, "POST", "/api/simulate", req); st != 200 {
			b.Fatalf("%d %s", st, body)
		}
	}
	b.ReportMetric(float64(o.Subgraphs), "subgraphs")
}

// BenchmarkAudit reports the lowest text contrast ratio over every page and
// the form fields without a label (TestBrowserAccessibility fails on
// either).
func BenchmarkAudit(b *testing.B) {
	ctx := browser(b)
	_, ts := testServer(b, Config{})
	var min float64
	unlabelled := 0
	for b.Loop() {
		var audits map[string]audit
		min, audits = auditPages(b, ctx, ts.URL)
		unlabelled = 0
		for _, a := range audits {
			unlabelled += len(a.Unlabelled)
		}
	}
	b.ReportMetric(min, "min-contrast")
	b.ReportMetric(float64(unlabelled), "unlabelled")
}
