package main

import (
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/sim"
)

// addSimRows fills a report summary's horizon, group rows and processor
// rows from a simulation result (nothing when res is nil); alone, when not
// nil, is the same run without the contention model (uncontended), whose
// p50 goes beside each group's.
func addSimRows(s *report.Summary, pl *hw.Platform, res, alone *sim.Result) {
	if res == nil {
		return
	}
	s.Horizon = res.Horizon
	s.Stretched = res.Stretched
	for i, g := range res.Groups {
		row := report.GroupRow{Name: g.Name, RateHz: g.OfferedHz, Deadline: g.Deadline,
			Requests: g.Requests, Completed: g.Completed, Late: g.Late, Dropped: g.Dropped, P50: g.P50, P99: g.P99, MissRate: g.MissRate}
		if alone != nil && i < len(alone.Groups) {
			row.Uncontended = alone.Groups[i].P50
		}
		s.Groups = append(s.Groups, row)
	}
	for i, pr := range res.Procs {
		kind := ""
		if i < len(pl.Processors) {
			kind = pl.Processors[i].Kind
		}
		s.Procs = append(s.Procs, report.ProcRow{Name: pr.Name, Kind: kind, Utilisation: pr.Utilisation, Busy: pr.Busy})
	}
}
