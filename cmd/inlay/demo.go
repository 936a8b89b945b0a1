package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
	"github.com/spf13/cobra"
)

type demoFlags struct {
	out      string
	platform string
	budget   time.Duration
	seed     int64
	zoo      bool
}

func newDemoCmd() *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Plan a built-in camera + voice scenario with every planner and compare them",
		Long: `demo plans a realistic multi-model scenario on the phone preset with every
planner and prints how much request rate each plan sustains (simulated):

  camera (15 Hz, deadline = period): BlazeFace face detection, then the OCR
          pipeline — text detection (PP-OCRv4 det), orientation (cls),
          recognition (PP-OCRv4 rec) — per frame;
  voice  (12.5 Hz, 80 ms audio chunks): Silero VAD beside the wake-word
          pipeline — log-mel front end, speech embedding, "hey jarvis" head.

These are the real ONNX models of shared/REAL_MODELS.md when they have been
fetched (scripts/fetch.sh, run by make test); otherwise zoo networks stand in
(camera: MobileNetV3-Small, YOLOv8n, SqueezeNet, DeepLabV3; voice: MobileBERT).
A baseline that sustains no rate at all says why beside its 0.

It writes into the output folder: the workload, every planner's plan, and for
the best plan a Gantt chart (SVG, PNG), a Chrome trace (opens in Perfetto),
the text report and an HTML page.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "output", "o", "inlay-demo", "output folder")
	fl.StringVar(&f.platform, "platform", "phone", "platform preset or file")
	fl.DurationVar(&f.budget, "budget", 12*time.Second, "wall-clock budget of each search planner (puzzle, inlay)")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the planners and the simulation")
	fl.BoolVar(&f.zoo, "zoo", false, "use the zoo stand-ins even when the real models are fetched")
	return cmd
}

func runDemo(cmd *cobra.Command, f *demoFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	out := cmd.OutOrStdout()
	w, pl, err := demoScenario(out, f)
	if err != nil {
		return err
	}
	est := cost.NewAnalytic(pl)
	bound, err := ratebound.Upper(w, pl, est)
	if err != nil {
		return err
	}
	rows, err := demoPlan(ctx, out, f, app.Problem{Workload: w, Platform: pl, Cost: est}, bound)
	if err != nil {
		return err
	}
	best, err := writeDemoTable(out, w, pl, est, rows, sim.Options{Seed: f.seed})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nrate scale: the largest factor on every group's rate at which 99%% of requests meet their deadline (simulated)\n")
	if bound.Proven() {
		fmt.Fprintf(out, "upper bound (no plan can beat it): %.3f — %s\n", bound.Scale, bound.Why)
	} else {
		fmt.Fprintf(out, "estimated bound: %.3f — %s\n", bound.Scale, bound.Why)
	}
	if best < 0 {
		return fmt.Errorf("demo: no planner produced a plan")
	}
	return demoFiles(out, f, w, pl, est, rows[best].name, rows[best].plan, bound)
}

// demoScenario writes the demo's workload into the output folder, loads it
// and the platform, and prints what they are.
func demoScenario(out io.Writer, f *demoFlags) (*workload.Workload, *hw.Platform, error) {
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	text, real := workload.DemoYAML(f.platform, f.zoo)
	wpath := filepath.Join(f.out, "workload.yaml")
	if err := os.WriteFile(wpath, []byte(text), 0o644); err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	w, err := workload.Load(wpath)
	if err != nil {
		return nil, nil, err
	}
	pl, err := hw.Resolve(f.platform)
	if err != nil {
		return nil, nil, err
	}
	src := "real ONNX models"
	if !real {
		src = "zoo stand-ins; make fetch fetches the real models"
	}
	fmt.Fprintf(out, "inlay demo: %d models in %d groups on %s (%s)\n", len(w.Models), len(w.Groups), pl.Name, src)
	fmt.Fprintf(out, "precision: %s allowed (workload.yaml's precision: list; int8 for these float models only because the demo allows it)\n", workload.PrecisionYAML(w.Precision))
	for _, g := range w.Groups {
		fmt.Fprintf(out, "  %-7s %5.1f Hz, deadline %.1f ms: %s\n", g.Name, g.RateHz(), float64(g.Deadline)/float64(time.Millisecond), strings.Join(g.Models, ", "))
	}
	fmt.Fprintln(out)
	return w, pl, nil
}

// demoRow is one planner's plan in the demo and what it sustains.
type demoRow struct {
	name  string
	plan  *plan.Plan
	scale float64
	secs  float64
	subs  int
}

// demoPlanners are the demo's planners, in the table's order.
var demoPlanners = []string{"single:npu", "single:cpu", "bestmap", "heft", "puzzle", "inlay"}

// demoPlan plans the scenario with every demo planner (a progress bar
// each), judges each plan in the same simulation and saves it.
func demoPlan(ctx context.Context, out io.Writer, f *demoFlags, prob app.Problem, bound ratebound.Bound) ([]demoRow, error) {
	judge := sim.NewEvaluator(prob.Workload, prob.Platform, prob.Cost, sim.Options{Seed: f.seed})
	var rows []demoRow
	for _, name := range demoPlanners {
		bar := newSearchBar(name, f.budget, 0, bound.Scale)
		got, err := app.Search(ctx, app.SearchInput{Problem: prob, Planner: name, Seed: f.seed, Budget: f.budget,
			Workers: defaultWorkers(), Progress: bar.update})
		bar.done()
		if err != nil {
			fmt.Fprintf(out, "%s: %v\n", name, err)
			continue
		}
		p := got.Plan
		r := demoRow{name: name, plan: p, secs: got.Seconds}
		for _, mp := range p.Models {
			r.subs += len(mp.Subgraphs)
		}
		s, err := judge.Evaluate(ctx, p)
		if err != nil {
			return nil, err
		}
		r.scale = s.Scale
		rows = append(rows, r)
		if err := p.Save(filepath.Join(f.out, "plan-"+strings.ReplaceAll(name, ":", "-")+".yaml")); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// writeDemoTable prints the planners side by side, with a reason beside
// every rate of 0, and returns the best row's index (-1: none).
func writeDemoTable(out io.Writer, w *workload.Workload, pl *hw.Platform, est cost.Estimator, rows []demoRow, simOpt sim.Options) (int, error) {
	base := map[string]float64{}
	for _, r := range rows {
		base[r.name] = r.scale
	}
	header := []string{"planner", "rate scale", "camera Hz", "voice Hz", "vs bestmap", "vs single:npu", "subgraphs", "search s"}
	notes := make([]string, len(rows))
	for i, r := range rows {
		if r.scale > 0 {
			continue
		}
		var err error
		if notes[i], err = whyZero(w, pl, est, r.plan, simOpt); err != nil {
			return -1, err
		}
		if len(header) == 8 {
			header = append(header, "why 0")
		}
	}
	t := textfmt.Table{Header: header}
	best := -1
	for i, r := range rows {
		if best < 0 || r.scale > rows[best].scale {
			best = i
		}
		cells := []string{r.name, fmt.Sprintf("%.3f", r.scale), hz(w, "camera", r.scale), hz(w, "voice", r.scale),
			times(r.scale, base["bestmap"]), times(r.scale, base["single:npu"]), fmt.Sprint(r.subs), fmt.Sprintf("%.1f", r.secs)}
		if len(header) > 8 {
			cells = append(cells, notes[i])
		}
		t.Add(cells...)
	}
	_, err := t.WriteTo(out)
	return best, err
}

// demoFiles writes the best plan's schedule drawings and reports.
func demoFiles(out io.Writer, f *demoFlags, w *workload.Workload, pl *hw.Platform, est cost.Estimator, name string, p *plan.Plan, bound ratebound.Bound) error {
	prog, err := sim.Compile(w, pl, est, p)
	if err != nil {
		return err
	}
	sust, res, err := sim.Sustain(prog, sim.Options{Seed: f.seed})
	if err != nil {
		return err
	}
	if res == nil {
		return nil
	}
	window := defaultWindow(w, res)
	title := fmt.Sprintf("inlay demo on %s, %s plan at rate scale %.3g", pl.Name, name, sust.Scale)
	var svg bytes.Buffer
	if err := report.Gantt(&svg, report.SVG, title, res.Lanes, res.Spans, [2]time.Duration{0, window}); err != nil {
		return err
	}
	var png bytes.Buffer
	if err := report.Gantt(&png, report.PNG, title, res.Lanes, res.Spans, [2]time.Duration{0, window}); err != nil {
		return err
	}
	var trace bytes.Buffer
	if err := report.ChromeTrace(&trace, report.Rows(res.Lanes, res.Spans), res.Spans); err != nil {
		return err
	}
	s := report.Summary{Workload: "workload.yaml", Platform: pl.Name, Planner: name, Source: "simulation",
		Scale: sust.Scale, Bound: bound.Scale, BoundWhy: bound.Why}
	addSimRows(&s, pl, res, nil)
	var txt, html bytes.Buffer
	if err := report.Text(&txt, s); err != nil {
		return err
	}
	if err := report.HTML(&html, s, svg.Bytes()); err != nil {
		return err
	}
	files := map[string][]byte{"gantt.svg": svg.Bytes(), "gantt.png": png.Bytes(), "trace.json": trace.Bytes(), "report.txt": txt.Bytes(), "report.html": html.Bytes()}
	for _, fn := range []string{"gantt.svg", "gantt.png", "trace.json", "report.txt", "report.html"} {
		if err := os.WriteFile(filepath.Join(f.out, fn), files[fn], 0o644); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	fmt.Fprintf(out, "\nbest plan: %s — schedule at its max rate:\n\n", name)
	if _, err := out.Write(txt.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nwrote %s/: workload.yaml, plan-*.yaml, gantt.svg, gantt.png, trace.json (Perfetto), report.txt, report.html\n", f.out)
	return nil
}

// whyZero says in one line why a plan sustains no rate at all: the groups
// that miss their deadline even at a vanishing rate, with their latency
// alone beside the deadline.
func whyZero(w *workload.Workload, pl *hw.Platform, est cost.Estimator, p *plan.Plan, opt sim.Options) (string, error) {
	prog, err := sim.Compile(w, pl, est, p)
	if err != nil {
		return "", err
	}
	opt.NoSpans = true
	sust, res, err := sim.Sustain(prog, opt)
	if err != nil {
		return "", err
	}
	if sust.Feasible || res == nil {
		return sust.Limit, nil
	}
	var late []string
	for _, g := range res.Groups {
		if g.MissRate > 0.01 {
			late = append(late, fmt.Sprintf("%s takes %.1f ms alone, over its %.1f ms deadline", g.Name, ms(g.P99), ms(g.Deadline)))
		}
	}
	if len(late) == 0 {
		return sust.Limit, nil
	}
	return strings.Join(late, "; "), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func hz(w *workload.Workload, group string, scale float64) string {
	g := w.Group(group)
	if g == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", g.RateHz()*scale)
}

func times(x, base float64) string {
	if base <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x/base)
}
