package view

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/report/progress"
)

// ProfilePrinter prints the profile loop as it goes: a progress bar (a
// plain line now and then when stderr is not a terminal) and each round's
// summary.
type ProfilePrinter struct {
	Out, ErrOut io.Writer
	// Workload, Platform and Store name what is profiled where, for the
	// first line; Cycles and Rounds are the --cycles and --rounds asked for.
	Workload, Platform, Store string
	Cycles, Rounds            int
	bar                       *progressbar.ProgressBar
	what                      string
}

func (p *ProfilePrinter) Started(info profile.DeviceInfo) {
	fmt.Fprintf(p.Out, "profiling %s on %s (device %s, ONNX Runtime %s) into %s\n", p.Workload, p.Platform, info.Name, info.ORTVersion, p.Store)
}

func (p *ProfilePrinter) HandOff(r app.HandOffResult) { fmt.Fprintln(p.Out, HandOffLine(r)) }

func (p *ProfilePrinter) RoundStarted(rs app.RoundStart) {
	p.what = "profile"
	if rs.Round == 1 {
		ProfileStart(p.Out, rs)
	} else {
		p.what = fmt.Sprintf("profile round %d", rs.Round)
	}
	p.bar = progress.New(rs.Jobs, p.what)
}

func (p *ProfilePrinter) Measured(_, _, _ int, j profile.Job) {
	progress.Describe(p.bar, fmt.Sprintf("%s: %s layers %s", p.what, j.Model, j.Set.Key()))
	progress.Add(p.bar, 1)
}

// Done clears the progress bar.
func (p *ProfilePrinter) Done() {
	progress.Done(p.bar)
	p.bar = nil
}

func (p *ProfilePrinter) RoundDone(r app.Round) {
	p.Done()
	ProfileRound(p.Out, r, p.Cycles, p.Rounds)
}

func (p *ProfilePrinter) PlannerFailed(name string, err error) {
	fmt.Fprintf(p.ErrOut, "profile: planner %s: %v (its subgraphs are not measured)\n", name, err)
}
