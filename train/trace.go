package train

import (
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/report"
)

// Timelines turns the result's spans (Simulate with Options.Trace) into
// the report package's rows and spans: one row per stage of each replica
// (its tensor-parallel GPUs run in step), forward and backward tasks
// labelled by micro-batch, then the gradient reduction and the optimizer
// step. Use them with report.ChromeTrace (Perfetto) and report.Gantt.
func (r *Result) Timelines() (rows []string, spans []report.Span) {
	name := func(rep, st int) string {
		for _, s := range r.Stages {
			if s.Replica == rep && s.Stage == st {
				return fmt.Sprintf("r%d s%d %s×%d", rep, st, s.GPU, s.TP)
			}
		}
		return fmt.Sprintf("r%d s%d", rep, st)
	}
	seen := map[[2]int]bool{}
	maxRep := 0
	for _, s := range r.Stages {
		maxRep = max(maxRep, s.Replica)
	}
	for rep := 0; rep <= maxRep; rep++ {
		for _, s := range r.Stages {
			if s.Replica == rep && !seen[[2]int{rep, s.Stage}] {
				seen[[2]int{rep, s.Stage}] = true
				rows = append(rows, name(rep, s.Stage))
			}
		}
	}
	dur := func(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
	for _, sp := range r.Spans {
		label := sp.Kind
		model := sp.Kind
		switch sp.Kind {
		case "forward":
			label = fmt.Sprintf("F%d", sp.Micro)
		case "backward":
			label = fmt.Sprintf("B%d", sp.Micro)
		}
		if sp.Chunk > 0 {
			label += fmt.Sprintf(".%d", sp.Chunk)
		}
		spans = append(spans, report.Span{Processor: name(sp.Replica, sp.Stage), Label: label, Group: fmt.Sprintf("replica %d", sp.Replica),
			Model: model, Request: sp.Micro, Start: dur(sp.Start), End: dur(sp.End)})
	}
	return rows, spans
}
