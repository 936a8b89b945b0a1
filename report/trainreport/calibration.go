package trainreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/train/published"
)

// CalibrationSet is one data set's held-out errors in CalibrationDoc.
type CalibrationSet struct {
	Set        string               `json:"set"`
	N          int                  `json:"rows"`
	Folds      string               `json:"folds"`
	Median     float64              `json:"median_abs_error"`
	P95        float64              `json:"p95_abs_error"`
	Worst      float64              `json:"worst_abs_error"`
	Mean       float64              `json:"mean_abs_error"`
	MemMean    float64              `json:"memory_mean_abs_error,omitempty"`
	KendallMin *float64             `json:"kendall_tau_min,omitempty"`
	Kendall    []published.ShapeTau `json:"kendall_tau,omitempty"`
	Rows       []published.Row      `json:"rows_held_out"`
}

// CalibrationFit is one GPU type's fitted efficiency in CalibrationDoc.
type CalibrationFit struct {
	GPU     string           `json:"gpu"`
	Eff     train.Efficiency `json:"efficiency"`
	Sources []string         `json:"sources"`
}

// CalibrationDoc is inlay train calibrate --json's document.
type CalibrationDoc struct {
	Sets    []CalibrationSet         `json:"sets"`
	Fitted  []CalibrationFit         `json:"fitted"`
	Targets []published.TargetResult `json:"targets"`
}

// Calibration is r's document.
func Calibration(r *published.Report) CalibrationDoc {
	var out CalibrationDoc
	for _, s := range r.Sets {
		x := CalibrationSet{Set: s.Set, N: s.N, Folds: s.Folds, Median: s.Median, P95: s.P95, Worst: s.Worst, Mean: s.Mean, MemMean: s.MemMean, Kendall: s.Kendall, Rows: s.Rows}
		if len(s.Kendall) > 0 {
			k := s.KendallMin
			x.KendallMin = &k
		}
		out.Sets = append(out.Sets, x)
	}
	for _, f := range r.Fitted {
		out.Fitted = append(out.Fitted, CalibrationFit{f.GPU, f.Eff, f.Sources})
	}
	out.Targets = r.TargetResults()
	return out
}

// WriteCalibration writes the held-out errors of each set, the targets
// and the efficiencies fitted on every row.
func WriteCalibration(w io.Writer, r *published.Report) error {
	t := textfmt.Table{Header: []string{"SET", "ROWS", "HELD OUT", "MEDIAN", "P95", "WORST", "MEAN", "MEMORY MEAN", "KENDALL MIN"}}
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	for _, s := range r.Sets {
		mem, tau := "", ""
		if s.MemN > 0 {
			mem = pct(s.MemMean)
		}
		if len(s.Kendall) > 0 {
			tau = fmt.Sprintf("%.3f", s.KendallMin)
		}
		t.Add(s.Set, fmt.Sprint(s.N), s.Folds, pct(s.Median), pct(s.P95), pct(s.Worst), pct(s.Mean), mem, tau)
	}
	fmt.Fprintln(w, "held-out |error| of the iteration time (and of the peak memory where measured):")
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ntargets:")
	tt := textfmt.Table{Header: []string{"SET", "METRIC", "TARGET", "VALUE", "MET"}}
	for _, x := range r.TargetResults() {
		lim, val := pct(x.Limit), pct(x.Value)
		op := "≤ "
		if x.Metric == "kendall_min" {
			lim, val, op = fmt.Sprintf("%.2f", x.Limit), fmt.Sprintf("%.3f", x.Value), "≥ "
		}
		tt.Add(x.Set, x.Metric, op+lim, val, yesNo(x.Met))
	}
	if _, err := tt.WriteTo(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nfitted on every row:")
	ft := textfmt.Table{Header: []string{"GPU", "GEMM", "GEMM TRAFFIC", "MEMORY", "BACKWARD", "LAUNCH µs", "LINK", "NETWORK", "LINK LAT µs", "CONTEXT GB", "FRAG", "FROM"}}
	for _, f := range r.Fitted {
		e := f.Eff
		g := func(x float64) string { return fmt.Sprintf("%.3g", x) }
		ft.Add(f.GPU, g(e.GEMM), g(e.GEMMTraffic), g(e.Memory), g(e.Backward), g(e.LaunchUs), g(e.Link), g(e.Network), g(e.LinkLatencyUs), g(e.ContextGB), g(e.Fragmentation), strings.Join(f.Sources, ", "))
	}
	_, err := ft.WriteTo(w)
	return err
}
