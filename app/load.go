package app

import (
	"fmt"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/workload"
)

// LoadOn loads the workload at path and the platform it runs on
// (hw.Choose: --platform, else the workload's, else the default), and,
// when planPath is not "", the plan file.
func LoadOn(path, platform, planPath string) (*workload.Workload, *hw.Platform, *plan.Plan, error) {
	w, err := workload.Load(path)
	if err != nil {
		return nil, nil, nil, err
	}
	pl, err := hw.Choose(platform, w.Platform)
	if err != nil {
		return nil, nil, nil, err
	}
	if planPath == "" {
		return w, pl, nil, nil
	}
	p, err := plan.Load(planPath)
	if err != nil {
		return nil, nil, nil, err
	}
	return w, pl, p, nil
}

// CalibrateWorkload fits the analytic model to what the profile store at
// profiles holds of the workload's models on the platform's device
// (Calibrate); the store must hold measurements of that device.
func CalibrateWorkload(profiles, workloadPath, platform string, opt CalibrateOptions) (*CalibrationResult, error) {
	w, pl, _, err := LoadOn(workloadPath, platform, "")
	if err != nil {
		return nil, err
	}
	st, err := profile.Open(profiles)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	device, err := profile.DeviceFor(st, pl)
	if err != nil {
		return nil, err
	}
	if device == "" {
		return nil, fmt.Errorf("calibrate: %s holds no measurements for platform %s (run inlay profile first)", st.Path(), pl.Name)
	}
	return Calibrate(st, device, pl, w, opt)
}

// LoadWorkloads loads the workload files at paths.
func LoadWorkloads(paths []string) ([]*workload.Workload, error) {
	var ws []*workload.Workload
	for _, path := range paths {
		w, err := workload.Load(path)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}
