package app

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/train/planner"
	"github.com/inlay-dev/inlay/train/published"
)

// TrainPlanInput is one training-plan search (inlay train plan): the
// model and cluster of Spec, the planner and its options, and the engine
// format to export the plan to ("" for none).
type TrainPlanInput struct {
	Spec                 train.Spec
	Planner, Objective   string
	Budget               time.Duration
	GlobalBatch, MaxGPUs int
	MaxDollarsPerHour    float64
	// Prices are dollars per GPU-hour by type: TYPE=PRICE[,TYPE=PRICE…].
	Prices      string
	TokenBudget float64
	Export      string
}

// TrainPlanResult is what a training-plan search found: the planner's
// result, the plan file (inlay train plan --json) and, when asked for,
// the plan in the engine's format.
type TrainPlanResult struct {
	Result *planner.Result
	File   *train.PlanFile
	Export []byte
}

// TrainPlan resolves the target, runs the planner and exports the plan.
func TrainPlan(in TrainPlanInput) (*TrainPlanResult, error) {
	m, c, err := train.ResolveTarget(in.Spec)
	if err != nil {
		return nil, err
	}
	prices, err := ParsePrices(in.Prices)
	if err != nil {
		return nil, err
	}
	pl, err := planner.New(in.Planner)
	if err != nil {
		return nil, err
	}
	o := planner.Options{Objective: in.Objective, GlobalBatch: in.GlobalBatch, MaxGPUs: in.MaxGPUs, MaxDollarsPerHour: in.MaxDollarsPerHour,
		Prices: prices, TokenBudget: in.TokenBudget, Budget: in.Budget}
	res, err := pl.Plan(&m, c, o)
	if err != nil {
		return nil, err
	}
	out := &TrainPlanResult{Result: res, File: planner.File(&m, c, o, res)}
	if in.Export != "" {
		if out.Export, err = planner.Export(in.Export, &m, c, res.Plan); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ParsePrices reads TYPE=PRICE pairs (--prices): dollars per GPU-hour by
// GPU type, keyed by the type's canonical name.
func ParsePrices(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if s == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		x, err := strconv.ParseFloat(v, 64)
		g, known := train.LookupGPU(k)
		if !ok || err != nil || !(x > 0) || !known {
			return nil, fmt.Errorf("--prices %q: want TYPE=DOLLARS_PER_GPU_HOUR with a known type and a positive price", kv)
		}
		out[g.Name] = x
	}
	return out, nil
}

// TrainBench runs the planning scenarios whose name contains only (all
// when empty) with each of the comma-separated planners; the baselines
// search for budget each.
func TrainBench(planners, only string, budget time.Duration) []planner.BenchRow {
	names := strings.Split(planners, ",")
	var rows []planner.BenchRow
	for _, s := range planner.Scenarios() {
		if only != "" && !strings.Contains(s.Name, only) {
			continue
		}
		rows = append(rows, planner.RunBench(s, names, planner.Options{}, budget)...)
	}
	return rows
}

// TrainCalibrateInput is a calibration of the training model's GPU
// efficiencies to published measurements (inlay train calibrate).
type TrainCalibrateInput struct {
	// Published are the data files; Profiles is Sailor's per-layer
	// profiles ("" for none).
	Published []string
	Profiles  string
	// Write, when set, is where the fit is saved as Go source.
	Write          string
	Workers, Evals int
	KeepFlagged    bool
	Progress       func(done, total int)
}

// TrainCalibrate loads the data, fits and cross-validates, and writes
// the fit as Go source when asked.
func TrainCalibrate(in TrainCalibrateInput) (*published.Report, error) {
	if len(in.Published) == 0 {
		return nil, fmt.Errorf("train calibrate: give --published FILE (one or more)")
	}
	var cases []published.Case
	for _, f := range in.Published {
		cs, err := published.Load(f)
		if err != nil {
			return nil, err
		}
		cases = append(cases, cs...)
	}
	var layers []published.LayerCase
	if in.Profiles != "" {
		ls, err := published.LoadProfiles(in.Profiles)
		if err != nil {
			return nil, err
		}
		layers = ls
	}
	rep, err := published.CrossValidate(cases, layers, published.CVOptions{Workers: in.Workers, Fit: published.FitOptions{MaxEvals: in.Evals},
		KeepFlagged: in.KeepFlagged, Progress: in.Progress})
	if err != nil {
		return nil, err
	}
	if in.Write != "" {
		command := "inlay train calibrate --published " + strings.Join(in.Published, " \\\n  --published ")
		if in.Profiles != "" {
			command += " \\\n  --profiles " + in.Profiles
		}
		if err := os.WriteFile(in.Write, []byte(rep.GoSource(command+" \\\n  --write "+in.Write)), 0o644); err != nil {
			return nil, fmt.Errorf("train calibrate: %w", err)
		}
	}
	return rep, nil
}
