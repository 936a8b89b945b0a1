package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// traceProcess is the process every processor thread belongs to.
const (
	tracePID     = 1
	traceProcess = "inlay"
)

// traceEvent is one entry of the trace-event format's "traceEvents" array.
// Field order is the output order.
type traceEvent struct {
	Name  string      `json:"name"`
	Cat   string      `json:"cat,omitempty"`
	Ph    string      `json:"ph"`
	TS    json.Number `json:"ts"`
	Dur   json.Number `json:"dur,omitempty"` // set on complete events only
	PID   int         `json:"pid"`
	TID   int         `json:"tid"`
	CName string      `json:"cname,omitempty"`
	Args  any         `json:"args,omitempty"`
}

type nameArgs struct {
	Name string `json:"name"`
}

type sortArgs struct {
	SortIndex int `json:"sort_index"`
}

type spanArgs struct {
	Group   string `json:"group"`
	Model   string `json:"model"`
	Request int    `json:"request"`
	Late    bool   `json:"late"`
}

// ChromeTrace writes the spans in the Chrome trace-event JSON format, which
// Perfetto (ui.perfetto.dev) and chrome://tracing open.
//
// All processors belong to one process (pid 1, named "inlay"); each
// processor is a thread named after it (tid 1, 2, … in the order of procs),
// and a processor whose spans overlap gets one more thread per extra lane,
// named "NAME #2", "NAME #3", …. Each span is a complete ("X") event with
// ts and dur in microseconds, category its group, and args group, model,
// request and late; late spans carry cname "terrible" (red in the legacy
// viewer). Events are sorted by thread, then start, so the output does not
// depend on the order of spans. Every span's processor must be in procs.
func ChromeTrace(w io.Writer, procs []string, spans []Span) error {
	laid, lanes, err := layout(procs, spans)
	if err != nil {
		return err
	}
	// tid of processor i's lane l is first[i]+l.
	first := make([]int, len(procs))
	next := 1
	for i := range procs {
		first[i] = next
		next += lanes[i]
	}

	events := []traceEvent{{Name: "process_name", Ph: "M", TS: "0", PID: tracePID, Args: nameArgs{traceProcess}}}
	for i, p := range procs {
		for l := 0; l < lanes[i]; l++ {
			name := p
			if l > 0 {
				name = p + " #" + strconv.Itoa(l+1)
			}
			tid := first[i] + l
			events = append(events,
				traceEvent{Name: "thread_name", Ph: "M", TS: "0", PID: tracePID, TID: tid, Args: nameArgs{name}},
				traceEvent{Name: "thread_sort_index", Ph: "M", TS: "0", PID: tracePID, TID: tid, Args: sortArgs{tid}},
			)
		}
	}
	// layout sorted by processor then start; regroup by lane (= thread) so
	// each thread's slices come out in start order.
	byTID := make([][]traceEvent, next)
	for _, s := range laid {
		ev := traceEvent{
			Name: s.Name(),
			Cat:  s.Group,
			Ph:   "X",
			TS:   micros(s.Start),
			Dur:  micros(s.End - s.Start),
			PID:  tracePID,
			TID:  first[s.proc] + s.lane,
			Args: spanArgs{Group: s.Group, Model: s.Model, Request: s.Request, Late: s.Late},
		}
		if s.Late {
			ev.CName = "terrible"
		}
		byTID[ev.TID] = append(byTID[ev.TID], ev)
	}
	for _, evs := range byTID {
		events = append(events, evs...)
	}

	bw := bufio.NewWriter(w)
	bw.WriteString("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n")
	for i, ev := range events {
		b, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("report: trace: %w", err)
		}
		bw.Write(b)
		if i < len(events)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("]}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: trace: %w", err)
	}
	return nil
}

// micros writes d in microseconds as an exact decimal ("12", "12.5",
// "12.345"), so that a slice's end (ts+dur) is exact too, and no rounding
// makes back-to-back slices overlap.
func micros(d time.Duration) json.Number {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	whole, frac := int64(d/time.Microsecond), int64(d%time.Microsecond)
	if frac == 0 {
		return json.Number(sign + strconv.FormatInt(whole, 10))
	}
	f := strings.TrimRight(fmt.Sprintf("%03d", frac), "0")
	return json.Number(sign + strconv.FormatInt(whole, 10) + "." + f)
}
