package serve

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// go test ./serve -run TestScreenshots -screenshots ../docs writes a
// screenshot of every page into docs/ (serve-PAGE.png).
var screenshots = flag.String("screenshots", "", "write a screenshot of each page into this folder")

func TestScreenshots(t *testing.T) {
	if *screenshots == "" {
		t.Skip("give -screenshots DIR to write the pages' screenshots")
	}
	ctx := browser(t)
	_, ts := testServer(t, Config{})
	open(t, ctx, ts.URL+"/")
	waitFor(t, ctx, `!!document.getElementById('verdict-ok')`)
	shot := func(name string) {
		t.Helper()
		var png []byte
		run(t, ctx, chromedp.FullScreenshot(&png, 100))
		if err := os.WriteFile(filepath.Join(*screenshots, "serve-"+name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shot("workload")
	js(t, ctx, `location.hash = '#platform'`, nil)
	waitFor(t, ctx, `document.querySelectorAll('#plat-tables table').length > 0`)
	shot("platform")
	// Plan: bestmap, heft and a short inlay search, shown mid-search too.
	js(t, ctx, `location.hash = '#plan'`, nil)
	js(t, ctx, `for (const c of document.querySelectorAll('#planner-picks input')) c.checked = ['bestmap', 'heft', 'inlay'].includes(c.value);
		document.getElementById('budget').value = '4'; true`, nil)
	run(t, ctx, chromedp.Click("#run", chromedp.ByID))
	waitFor(t, ctx, `document.querySelectorAll('#runs .run').length === 3 && /evaluations/.test(document.querySelectorAll('#runs .run')[2].innerText) && document.querySelectorAll('#runs .run progress')[2].value > 0.4`)
	shot("plan-running")
	waitFor(t, ctx, `document.querySelectorAll('#runs .res a').length === 3`)
	shot("plan")
	js(t, ctx, `location.hash = '#view/' + state.current.id`, nil)
	waitFor(t, ctx, `+document.getElementById('gantt').dataset.boxes > 0`)
	js(t, ctx, `select(view.boxes.findIndex((b) => !view.o.gantt.spans[b.i].transfer)); true`, nil)
	js(t, ctx, hoverJS(3), nil)
	shot("view")
	js(t, ctx, `location.hash = '#compare'`, nil)
	shot("compare")
	js(t, ctx, `location.hash = '#whatif'`, nil)
	waitFor(t, ctx, `!!document.getElementById('whatif-scale')`)
	js(t, ctx, `(() => { const i = document.querySelector('input[data-group="camera"][data-kind="rate"]'); i.value = '30'; i.dispatchEvent(new Event('input'));
		const s = document.querySelector('input[data-kind="speed"][data-proc="npu"]'); s.value = '80'; s.dispatchEvent(new Event('input')); document.body.dataset.whatif = ''; return true })()`, nil)
	waitFor(t, ctx, `document.body.dataset.whatif !== ''`)
	shot("whatif")
	js(t, ctx, `location.hash = '#bench'`, nil)
	js(t, ctx, `document.getElementById('bench-n').value = '3'; document.getElementById('bench-budget').value = '0.5'; true`, nil)
	run(t, ctx, chromedp.Click("#bench-run", chromedp.ByID))
	waitFor(t, ctx, `document.querySelectorAll('#bench-summary tr').length > 1`)
	shot("bench")
	js(t, ctx, `location.hash = '#cluster'`, nil)
	run(t, ctx, chromedp.Click("#cl-run", chromedp.ByID))
	waitFor(t, ctx, `+document.getElementById('cl-timeline').dataset.jobs > 0`)
	shot("cluster")
	js(t, ctx, `location.hash = '#training'`, nil)
	run(t, ctx, chromedp.Click("#tr-run", chromedp.ByID))
	waitFor(t, ctx, `+document.getElementById('tr-gantt').dataset.bars > 0`)
	shot("training")
	fmt.Println("screenshots written to", *screenshots)
}
