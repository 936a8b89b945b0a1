package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
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
// --profiles (a missing store is an error only when the flag was given).
// A nil cmd, or one without --profiles, gets the analytic model.
func costModel(cmd *cobra.Command, pl *hw.Platform, w *workload.Workload) (cost.Estimator, func() string, error) {
	path, named := profilesFlag(cmd)
	return profile.CostModel(path, named, pl, w)
}

// printCostNote writes a cost model's note, when it has one, to the
// command's stderr (so that --json output stays clean).
func printCostNote(cmd *cobra.Command, note func() string) {
	if cmd == nil || note == nil {
		return
	}
	if s := note(); s != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), s)
	}
}
