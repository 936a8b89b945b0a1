package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/report/progress"
	"github.com/inlay-dev/inlay/report/view"
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
		Long:  help("demo"),
		Args:  cobra.NoArgs,
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
	ctx, stop := interruptible(cmd)
	defer stop()
	out := cmd.OutOrStdout()
	d, err := app.NewDemo(f.out, f.platform, f.zoo)
	if err != nil {
		return err
	}
	view.DemoScenario(out, d)
	err = d.Plan(ctx, app.DemoOptions{Budget: f.budget, Seed: f.seed, Workers: defaultWorkers(),
		Started: func(name string, bound float64) (func(plan.Progress), func()) {
			bar := progress.NewSearch(name, f.budget, 0, bound)
			return bar.Update, bar.Done
		},
		Failed: func(name string, err error) { fmt.Fprintf(out, "%s: %v\n", name, err) }})
	if err != nil {
		return err
	}
	if err := view.DemoTable(out, d); err != nil {
		return err
	}
	if d.Best < 0 {
		return fmt.Errorf("demo: no planner produced a plan")
	}
	sust, res, err := d.Schedule(f.seed)
	if err != nil || res == nil {
		return err
	}
	txt, err := view.DemoFiles(d, sust, res)
	if err != nil {
		return err
	}
	return view.DemoBest(out, d.Rows[d.Best].Name, f.out, txt)
}
