package clusterreport

import (
	"fmt"
	"io"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/report"
)

// Gantt draws a simulation (run with a timeline) as a Gantt chart of the
// cluster's GPUs, a row per GPU named server/index, over hours (nil: the
// first 48 h from the arrival of the window's first job). Jobs sharing a
// GPU are drawn lighter.
func Gantt(w io.Writer, format string, r *sim.Result, c *chw.Platform, hours *[2]float64) error {
	var rows []string
	first := map[int]int{} // node → first row
	for i, n := range c.Nodes {
		first[i] = len(rows)
		for k := 0; k < n.GPUs; k++ {
			rows = append(rows, fmt.Sprintf("%s/%d", n.Name, k))
		}
	}
	var bars []report.ClusterBar
	lo := -1.0
	for _, j := range r.PerJob {
		if j.ID == r.Window[0] {
			lo = j.Arrival / 3600
		}
		for _, s := range j.Spans {
			used := map[int]int{}
			for _, node := range s.Servers {
				row := first[node] + used[node]
				used[node]++
				bars = append(bars, report.ClusterBar{Row: row, Start: s.Start / 3600, End: s.End / 3600, Job: j.ID, Shared: s.With >= 0})
			}
		}
	}
	if lo < 0 {
		lo = 0
	}
	hi := lo + 48
	if hours != nil {
		lo, hi = hours[0], hours[1]
	}
	return report.ClusterGantt(w, format, fmt.Sprintf("%s on %s", r.Policy, r.Cluster), rows, bars, lo, hi)
}

// JCTCDF draws the CDF of the job completion times of each result's
// window jobs that finished, a line per result.
func JCTCDF(w io.Writer, format string, results []*sim.Result) error {
	var series []report.Series
	for _, r := range results {
		s := report.Series{Name: r.Policy}
		for _, j := range r.PerJob {
			if j.ID >= r.Window[0] && j.ID <= r.Window[1] && j.Finish >= 0 {
				s.X = append(s.X, j.JCT/3600)
			}
		}
		series = append(series, s)
	}
	title := "JCT CDF"
	if len(results) > 0 {
		title += " on " + results[0].Cluster
	}
	return report.JCTCDF(w, format, title, series)
}
