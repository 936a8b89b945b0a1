package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// The browser tests drive one headless Chromium (Debian chromium) for the
// whole package through the DevTools protocol, one tab per test. Without
// Chromium they skip, unless INLAY_REQUIRE_ASSETS=1 (make test), when they
// fail.

var chromium struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if chromium.cancel != nil {
		chromium.cancel()
	}
	os.Exit(code)
}

func chromiumPath() string {
	if p := os.Getenv("INLAY_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser returns a new tab of the shared headless Chromium, closed when
// the test ends.
func browser(tb testing.TB) context.Context {
	tb.Helper()
	path := chromiumPath()
	if path == "" {
		msg := "no chromium found (Debian package chromium; make fetch installs it, INLAY_CHROMIUM names another)"
		assets.Missing(tb, msg)
	}
	chromium.once.Do(func() {
		dir, err := os.MkdirTemp("", "inlay-chromium-")
		if err != nil {
			chromium.err = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.UserDataDir(dir), chromedp.WindowSize(1360, 900))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(alloc)
		chromium.cancel = func() { cancelCtx(); cancelAlloc(); os.RemoveAll(dir) }
		if err := chromedp.Run(ctx); err != nil {
			chromium.err = fmt.Errorf("starting %s: %w", path, err)
			return
		}
		chromium.ctx = ctx
	})
	if chromium.err != nil {
		tb.Fatal(chromium.err)
	}
	tab, cancelTab := chromedp.NewContext(chromium.ctx)
	tb.Cleanup(cancelTab)
	// A tab in the background paints no frames (screenshots would wait).
	if err := chromedp.Run(tab, page.BringToFront(), chromedp.EmulateViewport(1360, 900)); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(tab, 90*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// testServer serves the examples folder of the repository on loopback.
func testServer(tb testing.TB, cfg Config) (*Server, *httptest.Server) {
	tb.Helper()
	if cfg.Examples == "" {
		cfg.Examples = "../examples"
	}
	s, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	tb.Cleanup(ts.Close)
	return s, ts
}

func run(tb testing.TB, ctx context.Context, actions ...chromedp.Action) {
	tb.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		tb.Fatal(err)
	}
}

// open loads the app and waits until it has started.
func open(tb testing.TB, ctx context.Context, url string) {
	tb.Helper()
	run(tb, ctx, chromedp.Navigate(url))
	settle(tb, ctx, `document.body.dataset.ready === '1'`)
}

// settle polls an expression right after a navigation: a poll that started
// in the page's first execution context, gone once the page replaced it,
// is started again.
func settle(tb testing.TB, ctx context.Context, expr string) {
	tb.Helper()
	var err error
	for try := 0; try < 3; try++ {
		err = chromedp.Run(ctx, chromedp.Poll(expr, nil, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
		if err == nil || !strings.Contains(err.Error(), "Cannot find context") {
			break
		}
	}
	if err != nil {
		tb.Fatalf("waiting for %s: %v", expr, err)
	}
}

// js evaluates an expression into res.
func js(tb testing.TB, ctx context.Context, expr string, res any) {
	tb.Helper()
	run(tb, ctx, chromedp.Evaluate(expr, res))
}

// await evaluates an expression whose value is a promise into res.
func await(tb testing.TB, ctx context.Context, expr string, res any) {
	tb.Helper()
	run(tb, ctx, chromedp.Evaluate(expr, res, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }))
}

// waitFor polls an expression until it is truthy.
func waitFor(tb testing.TB, ctx context.Context, expr string) {
	tb.Helper()
	if err := chromedp.Run(ctx, chromedp.Poll(expr, nil, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		var page string
		_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('main').innerText.slice(0, 2000)`, &page))
		tb.Fatalf("waiting for %s: %v\npage:\n%s", expr, err, page)
	}
}

// pickExample chooses an example in the Workload page's list and waits
// for its verdict.
func pickExample(tb testing.TB, ctx context.Context, name string) {
	tb.Helper()
	js(tb, ctx, `location.hash = '#workload'`, nil)
	run(tb, ctx, chromedp.SetValue("#example", name, chromedp.ByID))
	js(tb, ctx, `document.getElementById('example').dispatchEvent(new Event('change'))`, nil)
	waitFor(tb, ctx, fmt.Sprintf(`document.getElementById('wname').value === %q && !!document.querySelector('#verdict-ok, #verdict-error')`, name))
}

// planWith runs one planner from the Plan page and returns the outcome's ID.
func planWith(tb testing.TB, ctx context.Context, planner string, budget string) string {
	tb.Helper()
	js(tb, ctx, `location.hash = '#plan'`, nil)
	js(tb, ctx, fmt.Sprintf(`for (const c of document.querySelectorAll('#planner-picks input')) c.checked = c.value === %q;
		document.getElementById('budget').value = %q; true`, planner, budget), nil)
	run(tb, ctx, chromedp.Click("#run", chromedp.ByID))
	waitFor(tb, ctx, `!!document.querySelector('#runs .res a[href^="#view/"]') || !!document.querySelector('#runs .res .err')`)
	var href string
	js(tb, ctx, `(document.querySelector('#runs .res a[href^="#view/"]') || {getAttribute: () => 'error: ' + document.querySelector('#runs').innerText}).getAttribute('href')`, &href)
	id, ok := strings.CutPrefix(href, "#view/")
	if !ok {
		tb.Fatalf("no plan: %s", href)
	}
	return id
}

// planned opens the app on phone-zoo.yaml and plans it with a planner
// from the Plan page: the tab, the server and the plan's ID.
func planned(t *testing.T, planner string) (context.Context, *httptest.Server, string) {
	t.Helper()
	ctx := browser(t)
	_, ts := testServer(t, Config{})
	open(t, ctx, ts.URL+"/")
	pickExample(t, ctx, "phone-zoo.yaml")
	return ctx, ts, planWith(t, ctx, planner, "1")
}

func TestBrowserDemoLoads(t *testing.T) {
	ctx := browser(t)
	_, ts := testServer(t, Config{})
	open(t, ctx, ts.URL+"/")
	waitFor(t, ctx, `!!document.getElementById('verdict-ok')`)
	text, _ := workload.DemoYAML("phone", false)
	w, err := workload.LoadData([]byte(text), "../examples/"+demoName)
	if err != nil {
		t.Fatal(err)
	}
	var editor, verdict string
	var rows int
	js(t, ctx, `document.getElementById('yaml').value`, &editor)
	js(t, ctx, `document.getElementById('verdict').innerText`, &verdict)
	js(t, ctx, `document.querySelectorAll('#wl-tables table:first-of-type tbody tr').length`, &rows)
	if editor != text {
		t.Errorf("the editor holds %q, want the demo workload", editor)
	}
	want := fmt.Sprintf("valid: %d model(s)", len(w.Models))
	if !strings.Contains(verdict, want) || !strings.Contains(verdict, fmt.Sprintf("%d group(s) on phone", len(w.Groups))) {
		t.Errorf("verdict %q, want %q and %d group(s)", verdict, want, len(w.Groups))
	}
	if rows != len(w.Models) {
		t.Errorf("models table has %d rows, want %d", rows, len(w.Models))
	}
	// Selecting a model inspects it (inlay inspect's summary).
	run(t, ctx, chromedp.Click(`#wl-tables button[data-inspect="0"]`, chromedp.ByQuery))
	waitFor(t, ctx, `document.querySelectorAll('#wl-inspect table').length === 2 || !!document.querySelector('#wl-inspect .err')`)
	var caption string
	js(t, ctx, `document.querySelector('#wl-inspect caption, #wl-inspect .err').textContent`, &caption)
	if want := fmt.Sprintf("%s: ", w.Models[0].Name); !strings.HasPrefix(caption, want) || !strings.Contains(caption, fmt.Sprintf("%d layers", len(w.Models[0].Layers.Layers))) {
		t.Errorf("inspect shows %q, want %q… with %d layers", caption, want, len(w.Models[0].Layers.Layers))
	}
}

func TestBrowserMalformedWorkload(t *testing.T) {
	ctx := browser(t)
	_, ts := testServer(t, Config{})
	open(t, ctx, ts.URL+"/")
	waitFor(t, ctx, `!!document.getElementById('verdict-ok')`)
	bad := "platform: phone\nmodels:\n  - {name: det, zoo: yolov5s}\ngroups:\n  - name: camera\n    models: [det, ghost]\n    rate_hz: 10\n"
	_, parseErr := workload.Parse([]byte(bad), "../examples/"+demoName) // the editor keeps the file name
	if parseErr == nil {
		t.Fatal("the malformed workload parses")
	}
	// Paste it into the editor, as a person would.
	run(t, ctx, chromedp.Focus("#yaml", chromedp.ByID), chromedp.SetValue("#yaml", bad, chromedp.ByID))
	js(t, ctx, `document.getElementById('yaml').dispatchEvent(new Event('input')); true`, nil)
	waitFor(t, ctx, `!!document.getElementById('verdict-error')`)
	var msg string
	var line int
	js(t, ctx, `document.getElementById('verdict-error').textContent`, &msg)
	js(t, ctx, `+(document.querySelector('#gutter span.err') || {dataset: {line: 0}}).dataset.line`, &line)
	if msg != parseErr.Error() {
		t.Errorf("inline error %q, want the CLI's %q", msg, parseErr.Error())
	}
	if want := lineOf(parseErr.Error()); line != want || want != 6 {
		t.Errorf("error marked at line %d, want %d (the line naming ghost, 6)", line, want)
	}
}

// expectedBoxes plans with a baseline planner and counts, with the
// simulator, the subgraph executions that start in the plan view's window.
func expectedBoxes(t *testing.T, path, planner string) (boxes int, scale float64) {
	t.Helper()
	w, err := workload.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	pl := hwtest.Preset(t, w.Platform)
	est := cost.NewAnalytic(pl)
	pr, err := search.New(planner)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pr.Plan(context.Background(), &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Workers: 1}, sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1}))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := sim.Compile(w, pl, est, p)
	if err != nil {
		t.Fatal(err)
	}
	sust, res, err := sim.Sustain(prog, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	window := app.GanttWindow(w, res)
	procs := map[string]bool{}
	for _, pr := range pl.Processors {
		procs[pr.Name] = true
	}
	for _, sp := range res.Spans {
		if procs[sp.Processor] && sp.Start < window {
			boxes++
		}
	}
	return boxes, sust.Scale
}

func TestBrowserPlanGantt(t *testing.T) {
	ctx, _, id := planned(t, "heft")
	js(t, ctx, fmt.Sprintf(`location.hash = '#view/%s'`, id), nil)
	waitFor(t, ctx, `!document.getElementById('view-body').hidden && +document.getElementById('gantt').dataset.boxes > 0`)
	want, scale := expectedBoxes(t, "../examples/phone-zoo.yaml", "heft")
	var boxes int
	var shown string
	// The boxes painted on the chart: compute boxes, not the transfers.
	js(t, ctx, `view.boxes.filter((b) => !view.o.gantt.spans[b.i].transfer && b.w > 0).length`, &boxes)
	js(t, ctx, `document.getElementById('view-scale').textContent`, &shown)
	if boxes != want || want == 0 {
		t.Errorf("the Gantt has %d boxes, want one per simulated subgraph execution in the window: %d", boxes, want)
	}
	if shown != fmt.Sprintf("%.3f", scale) {
		t.Errorf("plan view shows rate scale %s, the simulator says %.3f", shown, scale)
	}
	// Hovering a box shows what ran there.
	var tip string
	js(t, ctx, hoverJS(0), &tip)
	if !strings.Contains(tip, "layers") || !strings.Contains(tip, "start") || !strings.Contains(tip, "duration") {
		t.Errorf("hover shows %q, want the model, layers, processor, data type, start and duration", tip)
	}
	// Clicking it shows why it is there: the --explain scores.
	var detail string
	js(t, ctx, `(() => { const b = view.boxes.filter((b) => !view.o.gantt.spans[b.i].transfer)[0]; const r = document.getElementById('gantt').getBoundingClientRect();
		document.getElementById('gantt').dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: r.left + b.x + b.w / 2, clientY: r.top + b.y + b.h / 2}));
		return document.getElementById('detail').innerText; })()`, &detail)
	if !strings.Contains(detail, "plan --explain") || !strings.Contains(detail, "(chosen)") {
		t.Errorf("click shows %q, want the subgraph's --explain scores", detail)
	}
}

func TestBrowserWhatIf(t *testing.T) {
	ctx, _, _ := planned(t, "heft")
	js(t, ctx, `location.hash = '#whatif'`, nil)
	waitFor(t, ctx, `!!document.getElementById('whatif-scale')`)
	var before string
	js(t, ctx, `document.getElementById('whatif-scale').textContent`, &before)
	// Camera at 20 Hz instead of 10: the simulator's answer for the same plan.
	run(t, ctx, chromedp.SetValue(`input[data-group="camera"][data-kind="rate"]`, "20", chromedp.ByQuery))
	js(t, ctx, `document.querySelector('input[data-group="camera"][data-kind="rate"]').dispatchEvent(new Event('input')); document.body.dataset.whatif = ''; true`, nil)
	waitFor(t, ctx, `document.body.dataset.whatif !== '' && !!document.getElementById('whatif-scale')`)
	var after string
	js(t, ctx, `document.getElementById('whatif-scale').textContent`, &after)

	w, err := workload.Load("../examples/phone-zoo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := hw.Preset("phone")
	est := cost.NewAnalytic(pl)
	p, err := search.New("heft")
	if err != nil {
		t.Fatal(err)
	}
	pp, err := p.Plan(context.Background(), &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1}, sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1}))
	if err != nil {
		t.Fatal(err)
	}
	scaleAt := func(w *workload.Workload) float64 {
		prog, err := sim.Compile(w, pl, est, pp)
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := sim.Sustain(prog, sim.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return s.Scale
	}
	base := scaleAt(w)
	cam := w.Group("camera")
	cam.Period, cam.Deadline = 50*time.Millisecond, 50*time.Millisecond // the deadline followed the period in the file
	changed := scaleAt(w)
	if before != fmt.Sprintf("%.3f", base) || after != fmt.Sprintf("%.3f", changed) {
		t.Errorf("what-if shows %s -> %s, the simulator says %.3f -> %.3f", before, after, base, changed)
	}
	if !(changed < base) {
		t.Errorf("doubling the camera's rate should lower the max rate scale: %.3f -> %.3f", base, changed)
	}
}

// nonLoopback is an address of this machine other than loopback, or "".
func nonLoopback() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	return ""
}

func TestBrowserTokenOffLoopback(t *testing.T) {
	host := nonLoopback()
	if host == "" {
		t.Skip("this machine has no non-loopback IPv4 address")
	}
	if err := CheckListen(host+":0", ""); err == nil {
		t.Fatalf("CheckListen(%s:0) without a token: no error", host)
	}
	ctx := browser(t)
	s, err := New(Config{Token: "s3cret", Examples: "../examples"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s.Handler()}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	url := "http://" + ln.Addr().String()

	var body string
	var status int
	run(t, ctx, chromedp.Navigate(url+"/"))
	js(t, ctx, `document.body.innerText`, &body)
	await(t, ctx, `fetch('/api/examples').then(r => r.status)`, &status)
	if status != http.StatusUnauthorized || !strings.Contains(body, "missing or wrong token") {
		t.Errorf("without the token: API status %d, page %q; want 401 and the reason", status, body)
	}
	var wrong int
	await(t, ctx, `fetch('/api/examples', {headers: {Authorization: 'Bearer nope'}}).then(r => r.status)`, &wrong)
	if wrong != http.StatusUnauthorized {
		t.Errorf("with a wrong token: status %d, want 401", wrong)
	}
	open(t, ctx, url+"/?token=s3cret")
	var loc string
	js(t, ctx, `location.search`, &loc)
	await(t, ctx, `fetch('/api/examples').then(r => r.status)`, &status)
	if status != http.StatusOK || loc != "" {
		t.Errorf("with the token: status %d, query %q; want 200 and the token gone from the address bar", status, loc)
	}
}

// hoverJS moves the mouse onto the k-th compute box of the chart and
// returns the tooltip's text.
func hoverJS(k int) string {
	return fmt.Sprintf(`(() => { const b = view.boxes.filter((b) => !view.o.gantt.spans[b.i].transfer)[%d]; const r = document.getElementById('gantt').getBoundingClientRect();
		document.getElementById('gantt').dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.left + b.x + b.w / 2, clientY: r.top + b.y + b.h / 2}));
		return document.getElementById('tip').hidden ? '' : document.getElementById('tip').textContent; })()`, k)
}
