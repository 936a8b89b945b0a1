package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/workload"
)

// addProfilesFlag adds --profiles, the profile store, to a command.
func addProfilesFlag(cmd *cobra.Command) {
	cmd.Flags().String("profiles", profile.DefaultStorePath(),
		"profile store (SQLite) with measurements from inlay profile")
}

// addPlatformFlag adds --platform, the platform a workload runs on.
func addPlatformFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "platform", "", "platform preset or file (default: the workload's, else "+hw.DefaultPlatform+")")
}

// addPlanFlag adds --plan, the plan file, required.
func addPlanFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "plan", "", "plan file (.yaml, .yml or .json); required")
	_ = cmd.MarkFlagRequired("plan")
}

// profilesFlag is the --profiles store's path and whether the user gave
// it ("", false when the command, or a nil one, has no such flag).
func profilesFlag(cmd *cobra.Command) (path string, named bool) {
	if cmd == nil {
		return "", false
	}
	if fl := cmd.Flags().Lookup("profiles"); fl != nil {
		return fl.Value.String(), fl.Changed
	}
	return "", false
}

// costModel is profile.CostModel for the store named by the command's
// --profiles (a missing store is an error only when the flag was given);
// done writes the model's note, when it has one, to the command's stderr
// (so that --json output stays clean).
func costModel(cmd *cobra.Command, pl *hw.Platform, w *workload.Workload) (est cost.Estimator, done func(), err error) {
	path, named := profilesFlag(cmd)
	est, note, err := profile.CostModel(path, named, pl, w)
	return est, func() {
		if s := note(); s != "" {
			fmt.Fprintln(cmd.ErrOrStderr(), s)
		}
	}, err
}

// loadProblem loads the workload at path on platform (--platform), the
// plan file at planPath (when not "") and costModel's cost model.
func loadProblem(cmd *cobra.Command, path, platform, planPath string) (pr app.Problem, p *plan.Plan, done func(), err error) {
	w, pl, p, err := app.LoadOn(path, platform, planPath)
	if err != nil {
		return pr, nil, nil, err
	}
	est, done, err := costModel(cmd, pl, w)
	return app.Problem{Workload: w, Platform: pl, Cost: est}, p, done, err
}
