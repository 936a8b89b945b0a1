package profile

import (
	"context"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
)

// takerDevice is a device that lists the optional measure fields it takes
// (known false: it cannot tell) and counts the measurements asked of it.
type takerDevice struct {
	pl       *hw.Platform
	fields   []string
	known    bool
	measured int
}

func (d *takerDevice) Info(context.Context) (DeviceInfo, error) {
	return DeviceInfo{Name: "remote", ORTVersion: "1.0", Platform: d.pl}, nil
}

func (d *takerDevice) Measure(context.Context, MeasureRequest) (Timing, error) {
	d.measured++
	return Timing{Median: 1, Reps: 1}, nil
}

func (d *takerDevice) Takes(f string) (bool, bool) {
	for _, g := range d.fields {
		if g == f {
			return true, d.known
		}
	}
	return false, d.known
}

// A device that says it does not take a field the run will ask for stops
// the run before its first measurement, naming the field and the flag; one
// that cannot tell, or that takes them all, does not.
func TestProfilerChecksFields(t *testing.T) {
	pl := hwtest.Preset(t, "host")
	st := tempStore(t)
	plan := []Job{{Kind: KindPlan}}
	for _, tc := range []struct {
		name    string
		fields  []string
		known   bool
		corun   bool
		wantErr string
	}{
		{"older agent without idle runs", []string{"cold", "corun"}, true, false, "does not take idle runs: update its agent, or profile with --idle 0"},
		{"agent without co-run conditions", []string{"cold", "idle"}, true, true, "does not take co-run conditions"},
		{"agent that cannot tell", nil, false, true, ""},
		{"agent that takes them all", []string{"cold", "corun", "idle"}, true, true, ""},
	} {
		dev := &takerDevice{pl: pl, fields: tc.fields, known: tc.known}
		p := &Profiler{Device: dev, Store: st, Reps: 1, Cold: 1, Idle: 1, Corun: tc.corun}
		err := p.checkFields("remote", plan)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
		}
		if _, err := p.Run(context.Background(), pl, plan); err == nil || dev.measured != 0 {
			t.Errorf("%s: Run: %v after %d measurements, want the error before any", tc.name, err, dev.measured)
		}
	}
	// Without idle runs asked for, an agent that takes none is fine.
	dev := &takerDevice{pl: pl, fields: []string{"cold"}, known: true}
	p := &Profiler{Device: dev, Store: st, Reps: 1, Cold: 1}
	if err := p.checkFields("remote", plan); err != nil {
		t.Errorf("no idle runs asked: %v", err)
	}
}
