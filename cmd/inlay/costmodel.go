package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

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

// costModel is the cost model of a command that plans or simulates on pl:
// the analytic model, calibrated with the factors inlay profile fitted for
// the platform's device, answering from the device's measurements first
// (profile.Estimator), when the store named by --profiles has any; else
// the plain analytic model. A missing store at the default path is fine;
// a missing store named by --profiles is an error. note reports, once the
// estimator has been used, how many subgraphs fell back to the model ("" when
// no store was used). A nil cmd, or one without --profiles, gets the
// analytic model. w (may be nil) only feeds the note: its models that
// the store holds no measurement of are named.
func costModel(cmd *cobra.Command, pl *hw.Platform, w *workload.Workload) (est cost.Estimator, note func() string, err error) {
	analytic := cost.NewAnalytic(pl)
	none := func() string { return "" }
	if cmd == nil {
		return analytic, none, nil
	}
	fl := cmd.Flags().Lookup("profiles")
	if fl == nil || fl.Value.String() == "" {
		return analytic, none, nil
	}
	path := fl.Value.String()
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) && !fl.Changed {
			return analytic, none, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("--profiles %s: no such file (inlay profile creates it)", path)
		}
		return nil, nil, fmt.Errorf("--profiles: %w", err)
	}
	st, err := profile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	device, err := storeDevice(st, pl)
	if err != nil {
		return nil, nil, err
	}
	if device == "" {
		if !fl.Changed {
			return analytic, none, nil
		}
		msg := fmt.Sprintf("profiles: %s holds no measurements for platform %s; using the analytic model", path, pl.Name)
		return analytic, func() string { return msg }, nil
	}
	base, calibrated, err := calibratedModel(st, device, pl)
	if err != nil {
		return nil, nil, err
	}
	pe := profile.NewEstimator(st, device, base)
	if err := pe.Err(); err != nil {
		return nil, nil, err
	}
	model := "analytic"
	if calibrated {
		model = "calibrated"
	}
	unmeasured := unmeasuredModels(pe, w)
	note = func() string {
		s := fmt.Sprintf("profiles: %d measurement(s) of %s from %s; %d subgraph(s) answered from them, %d had no measurement and fell back to the %s model",
			pe.Len(), device, path, pe.Hits(), pe.Misses(), model)
		if n := pe.Cold(); n > 0 {
			s += fmt.Sprintf("; %d with cold-cache figures", n)
		}
		if n := pe.InSitu(); n > 0 {
			s += fmt.Sprintf("; %d in-situ measurement(s) (inlay run --record) stand in for the profiler's", n)
		}
		if len(unmeasured) > 0 {
			s += fmt.Sprintf(" (never profiled or changed since: %s)", strings.Join(unmeasured, ", "))
		}
		return s
	}
	return pe, note, nil
}

// storeDevice picks the store's device for a platform: this machine for
// host, else the device most recently profiled as that platform; "" when
// there is none.
func storeDevice(st *profile.Store, pl *hw.Platform) (string, error) {
	if pl.Name == "host" {
		devs, err := st.Devices()
		if err != nil {
			return "", err
		}
		local := profile.LocalDeviceName()
		for _, d := range devs {
			if d.Name == local && d.Platform == pl.Name && d.Measurements+d.InSitu > 0 {
				return local, nil
			}
		}
	}
	name, ok, err := st.DeviceFor(pl.Name)
	if err != nil || !ok {
		return "", err
	}
	return name, nil
}

// calibratedModel is the analytic model with the device's fitted factors
// where the store has them; calibrated reports whether any processor had.
func calibratedModel(st *profile.Store, device string, pl *hw.Platform) (a *cost.Analytic, calibrated bool, err error) {
	cals, err := st.Calibrations(device)
	if err != nil {
		return nil, false, err
	}
	def := cost.NewAnalytic(pl)
	effs := make([]cost.Efficiency, len(pl.Processors))
	for i, pr := range pl.Processors {
		effs[i] = def.Efficiency(i)
		if c, ok := cals[pr.Name]; ok && c.Efficiency.Validate() == nil {
			effs[i] = c.Efficiency
			calibrated = true
		}
	}
	a, err = cost.NewCalibrated(pl, effs)
	return a, calibrated, err
}

// unmeasuredModels names the workload's models none of whose layers the
// estimator's device measured on any processor.
func unmeasuredModels(pe *profile.Estimator, w *workload.Workload) []string {
	if w == nil {
		return nil
	}
	var out []string
	for _, m := range w.Models {
		if m.Graph != nil && !pe.HasModel(profile.ModelID(m.Graph)) {
			out = append(out, m.Name)
		}
	}
	return out
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
