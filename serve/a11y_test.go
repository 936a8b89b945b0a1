package serve

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// auditJS checks the visible page: form fields without a label, and the
// contrast ratio (WCAG 2: (L1 + 0.05) / (L2 + 0.05) of relative luminances)
// of every visible text against the background it is drawn on — the
// nearest opaque background of its ancestors, or for a label in a Gantt
// box the box's fill (data-bg).
const auditJS = `(() => {
  const rgb = (s) => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null; const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const hex = (h) => ({r: parseInt(h.slice(1, 3), 16), g: parseInt(h.slice(3, 5), 16), b: parseInt(h.slice(5, 7), 16), a: 1});
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const background = (el) => {
    if (el.dataset && el.dataset.bg) return hex(el.dataset.bg);
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0.5) return c;
    }
    return {r: 255, g: 255, b: 255, a: 1};
  };
  const visible = (el) => { if (!el.getClientRects().length) return false; const s = getComputedStyle(el); return s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) > 0; };
  let min = 99, worst = '', texts = 0;
  const low = [];
  for (const el of document.querySelectorAll('body *')) {
    if (['SCRIPT', 'STYLE', 'OPTION', 'svg'].includes(el.tagName) || !visible(el)) continue;
    if (el.matches('button:disabled, input:disabled')) continue; // WCAG exempts inactive controls
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const field = el.matches('input:not([type=checkbox]):not([type=radio]):not([type=file]), select, textarea');
    if (!own && !field) continue;
    const s = getComputedStyle(el);
    const fg = rgb(el.namespaceURI === 'http://www.w3.org/2000/svg' ? (el.getAttribute('fill') && el.getAttribute('fill').startsWith('#') ? 'rgb(' + [1, 3, 5].map((i) => parseInt(el.getAttribute('fill').slice(i, i + 2), 16)).join(',') + ')' : s.fill) : s.color);
    if (!fg) continue;
    const r = ratio(fg, background(el));
    texts++;
    if (r < min) { min = r; worst = el.tagName + (el.id ? '#' + el.id : '') + ' ' + (el.textContent || '').trim().slice(0, 30); }
    if (r < 4.5) low.push(el.tagName + ' ' + (el.textContent || '').trim().slice(0, 30) + ' ' + r.toFixed(2));
  }
  // The chart is a canvas: its texts are the lane names and times on white,
  // and each model's name on its box's colour in the ink inkOn picks.
  if (typeof view !== 'undefined' && view && !document.getElementById('page-view').hidden) {
    const inks = [['#1b1f24', '#ffffff', 'lane name'], ['#4b5563', '#ffffff', 'time axis']];
    for (const b of view.boxes) inks.push([inkOn(b.fill), b.fill, 'label on ' + b.fill]);
    for (const [f, bg, what] of inks) {
      const r = ratio(hex(f), hex(bg));
      texts++;
      if (r < min) { min = r; worst = 'canvas ' + what; }
      if (r < 4.5) low.push('canvas ' + what + ' ' + r.toFixed(2));
    }
  }
  const unlabelled = [];
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (el.type === 'hidden' || !visible(el)) continue;
    if (!(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby')) unlabelled.push(el.id || el.outerHTML.slice(0, 60));
  }
  return {min, worst, texts, low: low.slice(0, 10), unlabelled};
})()`

type audit struct {
	Min        float64  `json:"min"`
	Worst      string   `json:"worst"`
	Texts      int      `json:"texts"`
	Low        []string `json:"low"`
	Unlabelled []string `json:"unlabelled"`
}

// auditPages plans once, then audits every page; it returns the lowest
// contrast ratio seen and the audits by page.
func auditPages(tb testing.TB, ctx context.Context, url string) (float64, map[string]audit) {
	tb.Helper()
	open(tb, ctx, url+"/")
	pickExample(tb, ctx, "phone-zoo.yaml")
	planWith(tb, ctx, "heft", "1")
	out := map[string]audit{}
	min := 99.0
	for _, page := range []string{"workload", "platform", "plan", "view", "compare", "whatif", "bench", "cluster", "training"} {
		js(tb, ctx, fmt.Sprintf(`location.hash = '#%s'`, page), nil)
		switch page {
		case "view":
			waitFor(tb, ctx, `+document.getElementById('gantt').dataset.boxes > 0`)
		case "whatif":
			waitFor(tb, ctx, `!!document.getElementById('whatif-scale')`)
		case "cluster":
			js(tb, ctx, `document.getElementById('cl-jobs').value = '30'; document.getElementById('cl-policy').value = 'fifo'; document.getElementById('cl-run').click(); true`, nil)
			waitFor(tb, ctx, `+document.getElementById('cl-timeline').dataset.jobs > 0`)
		case "platform":
			waitFor(tb, ctx, `document.querySelectorAll('#plat-tables table').length > 0`)
		case "training":
			js(tb, ctx, `document.getElementById('tr-run').click(); true`, nil)
			waitFor(tb, ctx, `+document.getElementById('tr-gantt').dataset.bars > 0`)
		}
		var a audit
		js(tb, ctx, auditJS, &a)
		out[page] = a
		if a.Min < min {
			min = a.Min
		}
	}
	return min, out
}

func TestBrowserAccessibility(t *testing.T) {
	ctx := browser(t)
	_, ts := testServer(t, Config{})
	min, audits := auditPages(t, ctx, ts.URL)
	for page, a := range audits {
		if a.Texts == 0 {
			t.Errorf("%s: no text audited", page)
		}
		if len(a.Unlabelled) > 0 {
			t.Errorf("%s: form fields without a label: %v", page, a.Unlabelled)
		}
		if len(a.Low) > 0 {
			t.Errorf("%s: text below a contrast ratio of 4.5: %v", page, a.Low)
		}
	}
	t.Logf("lowest contrast ratio over the pages: %.2f", min)
}

// focused describes the focused element.
const focusedJS = `(() => { const e = document.activeElement; return e ? (e.id || e.getAttribute('href') || e.tagName) : ''; })()`

func TestBrowserKeyboard(t *testing.T) {
	ctx, ts, id := planned(t, "heft")
	var seen []string
	tabTo := func(target string, limit int) bool {
		seen = nil
		for i := 0; i < limit; i++ {
			run(t, ctx, chromedp.KeyEvent(kb.Tab))
			var f string
			js(t, ctx, focusedJS, &f)
			seen = append(seen, f)
			if f == target {
				return true
			}
		}
		return false
	}
	// A fresh page: the skip link first, with a visible focus ring, then
	// the pages' links; Enter opens a page.
	run(t, ctx, chromedp.Navigate("about:blank"))
	open(t, ctx, ts.URL+"/#workload")
	if !tabTo("#main", 1) {
		t.Errorf("the first Tab focuses %v, want the skip link", seen)
	}
	var outline string
	js(t, ctx, `getComputedStyle(document.activeElement).outlineStyle`, &outline)
	if outline == "none" || outline == "" {
		t.Errorf("the focused skip link shows no focus outline")
	}
	if !tabTo("#platform", 10) {
		t.Fatalf("Tab never reaches the Platform link: %v", seen)
	}
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `location.hash === '#platform' && !document.getElementById('page-platform').hidden`)
	// The plan view: Tab reaches the chart; arrow keys walk its boxes.
	run(t, ctx, chromedp.Navigate("about:blank"))
	open(t, ctx, ts.URL+"/#view/"+id)
	waitFor(t, ctx, `+document.getElementById('gantt').dataset.boxes > 0`)
	if !tabTo("gantt", 30) {
		t.Fatalf("Tab never reaches the Gantt chart: %v", seen)
	}
	run(t, ctx, chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowDown))
	var detail string
	js(t, ctx, `document.getElementById('detail').innerText`, &detail)
	if !strings.Contains(detail, "layers") || !strings.Contains(detail, "start") {
		t.Errorf("arrow keys on the chart show %q, want a box's details", detail)
	}
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	js(t, ctx, `document.getElementById('detail').innerText`, &detail)
	if detail != "" {
		t.Errorf("Escape leaves %q", detail)
	}
	// What-if by keyboard: typing a rate re-simulates.
	js(t, ctx, `location.hash = '#whatif'; true`, nil)
	waitFor(t, ctx, `!!document.getElementById('whatif-scale')`)
	js(t, ctx, `document.body.dataset.whatif = ''; const i = document.querySelector('input[data-kind=rate]'); i.focus(); i.select(); true`, nil)
	run(t, ctx, chromedp.KeyEvent("20"))
	waitFor(t, ctx, `document.body.dataset.whatif !== ''`)
	var rate string
	js(t, ctx, `document.querySelector('input[data-kind=rate]').value`, &rate)
	if rate != "20" {
		t.Errorf("typed rate %q, want 20", rate)
	}
}
