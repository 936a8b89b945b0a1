package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/report"
	"github.com/schollz/progressbar/v3"
)

// barSet sets a possibly nil bar's value.
func barSet(b *progressbar.ProgressBar, n int) {
	if b != nil {
		_ = b.Set(n)
	}
}

func pictureFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return "svg", nil
	case ".png":
		return "png", nil
	}
	return "", fmt.Errorf("%s: want a .svg or .png file", path)
}

func writePicture(path string, draw func(f *os.File, format string) error) error {
	format, err := pictureFormat(path)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := draw(f, format); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeClusterGantt draws one row per GPU: server name and GPU index.
func writeClusterGantt(path, hours string, r *sim.Result, c *chw.Platform) error {
	var rows []string
	first := map[int]int{} // node → first row
	for i, n := range c.Nodes {
		first[i] = len(rows)
		for k := 0; k < n.GPUs; k++ {
			rows = append(rows, fmt.Sprintf("%s/%d", n.Name, k))
		}
	}
	var bars []report.ClusterBar
	lo, hi := -1.0, 0.0
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
	// Sharing jobs each hold the GPU: draw the second one in the row's lower
	// half is not possible in one lane, so shared bars are drawn lighter.
	if lo < 0 {
		lo = 0
	}
	hi = lo + 48
	if hours != "" {
		a, b, ok := strings.Cut(hours, ":")
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil || !(y > x) {
			return fmt.Errorf("--gantt-hours: want FROM:TO hours, got %q", hours)
		}
		lo, hi = x, y
	}
	title := fmt.Sprintf("%s on %s", r.Policy, r.Cluster)
	return writePicture(path, func(f *os.File, format string) error {
		return report.ClusterGantt(f, format, title, rows, bars, lo, hi)
	})
}

// writeJCTCDF draws the JCT CDF of the window's jobs of each result.
func writeJCTCDF(path string, results []*sim.Result) error {
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
	return writePicture(path, func(f *os.File, format string) error { return report.JCTCDF(f, format, title, series) })
}
