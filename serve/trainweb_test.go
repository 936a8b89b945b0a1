package serve

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserTraining opens the Training view, submits the default form
// and checks the planners' table (a row per planner, with numbers), the
// pipeline Gantt (a box per traced task, forward and backward) and the
// memory chart.
func TestBrowserTraining(t *testing.T) {
	ctx := browser(t)
	_, ts := testServer(t, Config{})
	open(t, ctx, ts.URL+"/#training")
	waitFor(t, ctx, `!document.getElementById('page-training').hidden && document.querySelectorAll('#tr-planners input:checked').length > 0`)
	var planners []string
	js(t, ctx, `[...document.querySelectorAll('#tr-planners input:checked')].map((c) => c.value)`, &planners)
	run(t, ctx, chromedp.Click("#tr-run", chromedp.ByID))
	waitFor(t, ctx, `+document.getElementById('tr-gantt').dataset.bars > 0 || !!document.getElementById('tr-message')`)
	var rows [][]string
	js(t, ctx, `[...document.querySelectorAll('#tr-table tbody tr')].map((tr) => [...tr.cells].map((c) => c.innerText))`, &rows)
	if len(rows) != len(planners) || len(planners) < 2 {
		t.Fatalf("the planners' table has %d rows, want one per planner %v: %v", len(rows), planners, rows)
	}
	number := regexp.MustCompile(`^[0-9.]+ ?[kMGT]?$`)
	for i, r := range rows {
		if r[0] != planners[i] || !number.MatchString(r[1]) || !regexp.MustCompile(`^[0-9.]+ %$`).MatchString(r[2]) || !regexp.MustCompile(`[0-9]`).MatchString(r[3]+r[4]+r[6]) {
			t.Errorf("row %d: %q, want %s with tokens/s, fraction of the bound, iteration, search time and peak memory", i, r, planners[i])
		}
	}
	var got struct {
		Bars, Spans, Forward, Backward, Rows, Stages, MemRows, Segments int
		Current                                                         string
	}
	js(t, ctx, `(() => { const p = training.answer.plans[training.chosen], g = document.getElementById('tr-gantt');
		return {Bars: +g.dataset.bars, Spans: p.timeline.spans.length, Forward: g.querySelectorAll('rect[data-kind=forward]').length,
			Backward: g.querySelectorAll('rect[data-kind=backward]').length, Stages: p.timeline.stages.length,
			Rows: new Set([...g.querySelectorAll('rect')].map((r) => r.getAttribute('y'))).size,
			MemRows: document.querySelectorAll('#tr-mem-table tbody tr').length, Segments: document.querySelectorAll('#tr-memory rect[data-part]').length,
			Current: document.querySelector('#tr-table tr[aria-current=true] td').innerText}; })()`, &got)
	if got.Bars == 0 || got.Bars != got.Spans || got.Forward == 0 || got.Forward != got.Backward || got.Rows != got.Stages {
		t.Errorf("Gantt: %d boxes for %d tasks (%d forward, %d backward) on %d rows for %d stages", got.Bars, got.Spans, got.Forward, got.Backward, got.Rows, got.Stages)
	}
	if got.MemRows != got.Stages || got.Segments < 3*got.Stages {
		t.Errorf("memory: %d table rows and %d bar segments for %d stages", got.MemRows, got.Segments, got.Stages)
	}
	// Selecting another planner draws its plan.
	other := 0
	if got.Current == planners[0] {
		other = 1
	}
	js(t, ctx, `document.querySelectorAll('#tr-table button[data-plan]')[`+string(rune('0'+other))+`].click(); true`, nil)
	var title string
	js(t, ctx, `document.getElementById('tr-title').textContent`, &title)
	if want := "The " + planners[other] + " plan"; title != want {
		t.Errorf("after selecting %s the title is %q, want %q", planners[other], title, want)
	}
	// A one-line model instead of the preset.
	js(t, ctx, `document.getElementById('tr-model-line').value = 'gpt:hidden=1024,layers=8,heads=16,seq=1024,vocab=32000';
		for (const c of document.querySelectorAll('#tr-planners input')) c.checked = c.value === 'inlay';
		document.getElementById('tr-gantt').dataset.bars = ''; document.getElementById('tr-run').click(); true`, nil)
	waitFor(t, ctx, `+document.getElementById('tr-gantt').dataset.bars > 0 || !!document.getElementById('tr-message')`)
	var caption string
	js(t, ctx, `document.querySelector('#tr-table caption').textContent`, &caption)
	if !strings.HasPrefix(caption, "gpt:hidden=1024,layers=8,heads=16,seq=1024,vocab=32000 on 16xA100-40,48xV100-16") {
		t.Errorf("planning a one-line model shows %q", caption)
	}
	// A GPU type the catalogue lacks: the server's one line, naming the field.
	js(t, ctx, `document.getElementById('tr-gpus').value = '8xB9000'; document.getElementById('tr-run').click(); true`, nil)
	waitFor(t, ctx, `!!document.getElementById('tr-message')`)
	var msg string
	js(t, ctx, `document.getElementById('tr-message').textContent`, &msg)
	if !strings.HasPrefix(msg, `serve: train: gpus: --gpus "8xB9000": unknown GPU type "B9000"`) {
		t.Errorf("a bad GPU list shows %q", msg)
	}
}
