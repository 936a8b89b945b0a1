package profile

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

func TestDefaultStorePathFollowsCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("INLAY_CACHE", dir)
	if got, want := DefaultStorePath(), filepath.Join(dir, "profiles.db"); got != want {
		t.Errorf("DefaultStorePath() = %s with $INLAY_CACHE=%s; want %s", got, dir, want)
	}
}

func TestCostModel(t *testing.T) {
	pl, err := hw.Host([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.db")
	// No store, or a missing one nobody named: the analytic model.
	for _, path := range []string{"", missing} {
		est, note, err := CostModel(path, false, pl, nil)
		if err != nil || note() != "" {
			t.Fatalf("CostModel(%q, unnamed): %v, note %q", path, err, note())
		}
		if _, ok := est.(*cost.Analytic); !ok {
			t.Errorf("CostModel(%q, unnamed) = %T, want the analytic model", path, est)
		}
	}
	if _, _, err := CostModel(missing, true, pl, nil); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("named missing store: %v", err)
	}

	// A store holding a measurement of this platform's device.
	path := filepath.Join(dir, "p.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if e, err := Open(empty); err != nil {
		t.Fatal(err)
	} else {
		e.Close()
	}
	lg := testLayers(t, "mobilenet_v2")
	set, cfg := graph.Range(0, 5), pl.DefaultConfig(0)
	k, err := SubgraphKey("dev", pl, lg, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutDevice("dev", pl.Name, "test"); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(Record{Key: k, Timing: Timing{Median: 123 * time.Microsecond, Reps: 5}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, note, err := CostModel(empty, true, pl, nil); err != nil || !strings.Contains(note(), "no measurements for platform") {
		t.Errorf("named store without the platform: %v, note %q", err, note())
	}
	est, note, err := CostModel(path, true, pl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := est.(*Estimator); !ok {
		t.Fatalf("CostModel with measurements = %T, want *Estimator", est)
	}
	if d, err := est.Subgraph(lg, set, cfg); err != nil || d != 123*time.Microsecond {
		t.Errorf("measured subgraph: %v, %v; want 123µs", d, err)
	}
	if n := note(); !strings.Contains(n, "1 subgraph(s) answered from them") {
		t.Errorf("note %q", n)
	}
}

// TestRecordedStartDelay checks what a run's prediction adds before its
// requests' first subgraphs: the recorded runs' arrival lag, else the
// hand-off probe's delay for the run's pinning and its loop's way of
// waiting, else nothing.
func TestRecordedStartDelay(t *testing.T) {
	us := time.Microsecond
	hos := []HandOff{
		{Pinned: false, PollStart: 100 * us, PollRequests: 60},
		{Pinned: true, SleepStart: 320 * us, SleepRequests: 30, PollStart: 110 * us, PollRequests: 30},
	}
	for _, tc := range []struct {
		name           string
		rec            Recorded
		pinned, sleeps bool
		want           time.Duration
		from           string
	}{
		{"pinned, sleeping", Recorded{HandOffs: hos}, true, true, 320 * us, "320µs from arrival to the first subgraph, as the profile's hand-off probe measured it with the event loop sleeping to"},
		{"pinned, polling", Recorded{HandOffs: hos}, true, false, 110 * us, "polling for"},
		{"unpinned, polling", Recorded{HandOffs: hos}, false, false, 100 * us, "polling for"},
		{"unpinned, sleeping: not measured", Recorded{HandOffs: hos}, false, true, 0, ""},
		{"recorded runs first", Recorded{ArrivalLag: 150 * us, HandOffs: hos}, true, true, 150 * us, "the arrival lag of 150µs that recorded runs saw"},
		{"an older store's hand-off", Recorded{HandOffs: []HandOff{{Pinned: true, Same: us, Cross: us, Samples: 3}}}, true, true, 0, ""},
		{"nothing", Recorded{}, true, true, 0, ""},
	} {
		got, from := tc.rec.StartDelay(tc.pinned, tc.sleeps)
		if got != tc.want || !strings.Contains(from, tc.from) || (tc.from == "") != (from == "") {
			t.Errorf("%s: %v (%q), want %v (%q)", tc.name, got, from, tc.want, tc.from)
		}
	}
}
