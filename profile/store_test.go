package profile

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
)

func testRecord(i int) Record {
	return Record{
		Key: Key{Device: "dev", Model: "abc123", Layers: fmt.Sprintf("%d-%d", i, i+2), Processor: "cpu0",
			Backend: "ort-cpu", DType: "float32", Shapes: "x:1x3x8x8"},
		ModelName:  "m",
		Timing:     Timing{Median: time.Duration(1000 + i), P90: 1500, Min: 900, Max: 2000, Stddev: 100, Reps: 10, Cold: 3000, ColdReps: 5},
		ORTVersion: "1.30.0", MeasuredAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

func TestStoreRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "profiles.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.Version(); err != nil || v != SchemaVersion {
		t.Fatalf("Version() = %d, %v; want %d", v, err, SchemaVersion)
	}
	want := testRecord(1)
	if err := st.Put(want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := st.Get(want.Key)
	if err != nil || !ok {
		t.Fatalf("Get: ok %v, err %v", ok, err)
	}
	if !got.MeasuredAt.Equal(want.MeasuredAt) {
		t.Errorf("MeasuredAt %v, want %v", got.MeasuredAt, want.MeasuredAt)
	}
	got.MeasuredAt = want.MeasuredAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Get = %+v\nwant %+v", got, want)
	}
	// Upsert replaces.
	want.Median, want.Error = 0, "boom"
	if err := st.Put(want); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := st.Get(want.Key); got.Error != "boom" || got.Median != 0 {
		t.Errorf("after upsert: %+v", got)
	}
	other := want.Key
	other.Shapes = "x:1x3x16x16"
	if _, ok, err := st.Get(other); ok || err != nil {
		t.Errorf("Get(other shapes) = %v, %v; want a miss", ok, err)
	}
	if err := st.Put(testRecord(5)); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records("dev")
	if err != nil || len(recs) != 2 {
		t.Fatalf("Records = %d, %v; want 2", len(recs), err)
	}
	if recs, _ := st.Records("nobody"); len(recs) != 0 {
		t.Errorf("Records(nobody) = %d rows", len(recs))
	}
	if err := st.Put(Record{}); err == nil {
		t.Error("Put of an empty key succeeded")
	}

	if err := st.PutDevice("dev", "host", "1.30.0"); err != nil {
		t.Fatal(err)
	}
	devs, err := st.Devices()
	if err != nil || len(devs) != 1 || devs[0].Measurements != 2 || devs[0].Platform != "host" {
		t.Fatalf("Devices = %+v, %v", devs, err)
	}
	if name, ok, err := st.DeviceFor("host"); name != "dev" || !ok || err != nil {
		t.Errorf("DeviceFor(host) = %q, %v, %v", name, ok, err)
	}
	if _, ok, _ := st.DeviceFor("phone"); ok {
		t.Error("DeviceFor(phone) found a device")
	}

	eff := cost.DefaultEfficiency("cpu")
	eff.DispatchOverhead = 7 * time.Microsecond
	if err := st.PutCalibration(CalibrationRow{Device: "dev", Processor: "cpu0", Efficiency: eff, MAPEBefore: 0.5, MAPEAfter: 0.1, Samples: 9, Cold: ColdFit{A: 0.5, B: -0.25, Samples: 7}}); err != nil {
		t.Fatal(err)
	}
	cals, err := st.Calibrations("dev")
	if err != nil || len(cals) != 1 {
		t.Fatalf("Calibrations = %v, %v", cals, err)
	}
	c := cals["cpu0"]
	if c.Efficiency.DispatchOverhead != eff.DispatchOverhead || c.Efficiency.Of(cost.Conv) != eff.Of(cost.Conv) || c.MAPEAfter != 0.1 || c.Cold != (ColdFit{A: 0.5, B: -0.25, Samples: 7}) {
		t.Errorf("calibration round trip: %+v", c)
	}

	// Reopening finds everything.
	st.Close()
	st2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if recs, _ := st2.Records(""); len(recs) != 2 {
		t.Errorf("after reopening: %d rows", len(recs))
	}
}

func TestStoreInSitu(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// A version-1 file from before the in-situ table: opening adds it.
	if _, err := st.db.Exec(`DROP TABLE insitu`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	prof := testRecord(1)
	situ := InSitu{Key: prof.Key, ModelName: "m", Typical: 6000, Timing: Timing{Median: 5000, Reps: 80}, ORTVersion: "1.30.0",
		MeasuredAt: prof.MeasuredAt}
	if err := st.Put(prof); err != nil {
		t.Fatal(err)
	}
	if err := st.PutInSitu(situ); err != nil {
		t.Fatal(err)
	}
	if err := st.PutDevice("dev", "host", "1.30.0"); err != nil {
		t.Fatal(err)
	}
	// The two tables keep their own figures for one key.
	if got, _, err := st.Get(prof.Key); err != nil || got.Median != prof.Median {
		t.Errorf("Get = %v, %v; want the profiler's median %v", got.Median, err, prof.Median)
	}
	recs, err := st.InSituRecords("dev")
	if err != nil || len(recs) != 1 {
		t.Fatalf("InSituRecords = %+v, %v", recs, err)
	}
	if got := recs[0]; !got.MeasuredAt.Equal(situ.MeasuredAt) {
		t.Errorf("MeasuredAt %v, want %v", got.MeasuredAt, situ.MeasuredAt)
	} else if got.MeasuredAt = situ.MeasuredAt; !reflect.DeepEqual(got, situ) {
		t.Errorf("InSituRecords = %+v\nwant %+v", got, situ)
	}
	if recs, _ := st.Records("dev"); len(recs) != 1 || recs[0].Median != prof.Median {
		t.Errorf("Records holds %+v; want the profiler's one", recs)
	}
	devs, err := st.Devices()
	if err != nil || len(devs) != 1 || devs[0].Measurements != 1 || devs[0].InSitu != 1 {
		t.Errorf("Devices = %+v, %v", devs, err)
	}
	if err := st.PutInSitu(InSitu{}); err == nil {
		t.Error("PutInSitu of an empty key succeeded")
	}

	// Merging pools the samples: samples {1,2,3} then {5,7} ms.
	key := prof.Key
	key.Layers = "9-9"
	// Typical drops the slowest tenth: of {1,2,3} ms none (ceil 0.9·3 = 3
	// kept), of ten samples the slowest.
	runs := []InSitu{NewInSitu(key, "m", millis(1, 2, 3), ""), NewInSitu(key, "m", millis(5, 7, 5, 5, 5, 5, 5, 5, 5, 5), "")}
	if runs[0].Typical != 2*time.Millisecond || runs[1].Typical != 5*time.Millisecond {
		t.Fatalf("Typical = %v, %v; want 2ms, 5ms", runs[0].Typical, runs[1].Typical)
	}
	for _, r := range runs {
		if err := st.MergeInSitu(r); err != nil {
			t.Fatal(err)
		}
	}
	all := Summarize(millis(1, 2, 3, 5, 7, 5, 5, 5, 5, 5, 5, 5, 5))
	recs, _ = st.InSituRecords("dev")
	var merged InSitu
	for _, r := range recs {
		if r.Layers == "9-9" {
			merged = r
		}
	}
	// (3·2 + 10·5) / 13 ms
	if want := (56*time.Millisecond + 6) / 13; merged.Typical != want || merged.Reps != 13 || merged.Min != all.Min ||
		merged.Max != all.Max || merged.Median != 5*time.Millisecond || merged.Stddev != runs[1].Stddev {
		t.Errorf("merged = %+v; want typical %v, 13 reps, min/max of %+v, the latest run's median and stddev", merged, want, all)
	}

	// Arrival lags average over requests.
	if _, ok, err := st.ArrivalLag("dev"); ok || err != nil {
		t.Errorf("ArrivalLag before any: %v, %v", ok, err)
	}
	for _, a := range []ArrivalLag{{Lag: 100 * time.Microsecond, Requests: 30}, {Lag: 500 * time.Microsecond, Requests: 10}} {
		if err := st.AddArrivalLag("dev", a.Lag, a.Requests); err != nil {
			t.Fatal(err)
		}
	}
	if a, ok, err := st.ArrivalLag("dev"); !ok || err != nil || a != (ArrivalLag{Lag: 200 * time.Microsecond, Requests: 40}) {
		t.Errorf("ArrivalLag = %+v, %v, %v; want 200µs over 40", a, ok, err)
	}
	if err := st.AddArrivalLag("dev", time.Millisecond, 0); err == nil {
		t.Error("AddArrivalLag of no requests succeeded")
	}
}

// schemaWithout is the store's schema without the given column lines: an
// older store's.
func schemaWithout(t *testing.T, lines ...string) string {
	t.Helper()
	old := schema
	for _, line := range lines {
		if !strings.Contains(old, line) {
			t.Fatalf("the schema lacks %q", line)
		}
		old = strings.Replace(old, line, "", 1)
	}
	return old
}

// TestStoreAddsColdColumns opens a version-1 store written before the
// cold-run columns existed: they are added, its rows read with no cold
// runs, and new rows keep theirs.
func TestStoreAddsColdColumns(t *testing.T) {
	old := schemaWithout(t, "	cold_ns     INTEGER NOT NULL DEFAULT 0,\n", "	cold_reps   INTEGER NOT NULL DEFAULT 0,\n",
		"	idle_ns     INTEGER NOT NULL DEFAULT 0,\n", "	idle_reps   INTEGER NOT NULL DEFAULT 0,\n",
		"	cycle_ns    INTEGER NOT NULL DEFAULT 0,\n", "	cycle_reps  INTEGER NOT NULL DEFAULT 0,\n",
		"	cold_a       REAL NOT NULL DEFAULT 0,\n", "	cold_b       REAL NOT NULL DEFAULT 0,\n", "	cold_samples INTEGER NOT NULL DEFAULT 0,\n")
	r := testRecord(1)
	st := rawStore(t, old, 1, `INSERT INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1000, 1500, 900, 2000, 100, 10, '1.30.0', '', '2026-01-02T03:04:05Z')`,
		`INSERT INTO calibrations VALUES ('dev', 'cpu0', '{}', 0.5, 0.1, 9, '2026-01-02T03:04:05Z')`)
	defer st.Close()
	got, ok, err := st.Get(r.Key)
	if err != nil || !ok || got.Median != 1000 || got.Cold != 0 || got.ColdReps != 0 {
		t.Fatalf("old row: %+v, %v, %v; want median 1000 and no cold runs", got, ok, err)
	}
	if got.Idle != 0 || got.IdleReps != 0 {
		t.Fatalf("old row: idle %v over %d runs, want none", got.Idle, got.IdleReps)
	}
	withIdle := testRecord(1)
	withIdle.Idle, withIdle.IdleReps = 3700, 4
	if err := st.Put(withIdle); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := st.Get(r.Key); got.Cold != 3000 || got.ColdReps != 5 || got.Idle != 3700 || got.IdleReps != 4 {
		t.Errorf("after Put: cold %v over %d runs, idle %v over %d, want 3µs over 5 and 3.7µs over 4", got.Cold, got.ColdReps, got.Idle, got.IdleReps)
	}
	cals, err := st.Calibrations("dev")
	if err != nil || len(cals) != 1 || cals["cpu0"].Cold != (ColdFit{}) || cals["cpu0"].MAPEAfter != 0.1 {
		t.Errorf("old calibration: %+v, %v; want one with no cold correction", cals, err)
	}
	// The version-1 file is migrated to version 2: it gains the corun table.
	if v, err := st.Version(); err != nil || v != 2 {
		t.Errorf("migrated version %d, %v; want 2", v, err)
	}
	c := Corun{Key: r.Key, Alone: 1000, Points: []CorunPoint{{Load: 0.5, GBs: 5, Slowdown: 1.2}}, K: 0.4, Intensity: 0.3}
	if err := st.PutCorun(c); err != nil {
		t.Fatal(err)
	}
	cs, err := st.Coruns(r.Device)
	if err != nil || len(cs) != 1 || cs[0].K != 0.4 || !reflect.DeepEqual(cs[0].Points, c.Points) {
		t.Errorf("co-run profiles after the migration: %+v, %v", cs, err)
	}
}

// TestStoreAddsIdleColumns: a store with the cold columns but not the idle
// ones (written before idle runs) keeps its cold figures on open, reads no
// idle runs, and takes them on the next Put.
func TestStoreAddsIdleColumns(t *testing.T) {
	old := schemaWithout(t, "	idle_ns     INTEGER NOT NULL DEFAULT 0,\n", "	idle_reps   INTEGER NOT NULL DEFAULT 0,\n")
	r := testRecord(1)
	st := rawStore(t, old, 2, `INSERT INTO measurements (device, model, layers, processor, backend, dtype, shapes, model_name,
		median_ns, p90_ns, min_ns, max_ns, stddev_ns, reps, ort_version, error, measured_at, cold_ns, cold_reps)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1000, 1500, 900, 2000, 100, 10, '1.30.0', '', '2026-01-02T03:04:05Z', 2500, 5)`)
	defer st.Close()
	got, ok, err := st.Get(r.Key)
	if err != nil || !ok || got.Median != 1000 || got.Cold != 2500 || got.ColdReps != 5 || got.Idle != 0 || got.IdleReps != 0 {
		t.Fatalf("row with cold runs only: %+v, %v, %v; want median 1000, cold 2.5µs over 5 runs, no idle runs", got, ok, err)
	}
	r.Idle, r.IdleReps = 3700, 4
	if err := st.Put(r); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := st.Get(r.Key); got.Cold != 3000 || got.Idle != 3700 || got.IdleReps != 4 {
		t.Errorf("after Put: cold %v, idle %v over %d runs; want 3µs, 3.7µs over 4", got.Cold, got.Idle, got.IdleReps)
	}
}

// A store from before the cycle figure gains its columns on open; PutCycle
// sets them, a new Put of the key clears them, and a key the store lacks
// or a figure that is not positive is an error.
func TestStoreAddsCycleColumns(t *testing.T) {
	old := schemaWithout(t, "	cycle_ns    INTEGER NOT NULL DEFAULT 0,\n", "	cycle_reps  INTEGER NOT NULL DEFAULT 0,\n")
	r := testRecord(1)
	st := rawStore(t, old, 2, `INSERT INTO measurements (device, model, layers, processor, backend, dtype, shapes, model_name,
		median_ns, p90_ns, min_ns, max_ns, stddev_ns, reps, ort_version, error, measured_at, cold_ns, cold_reps, idle_ns, idle_reps)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1000, 1500, 900, 2000, 100, 10, '1.30.0', '', '2026-01-02T03:04:05Z', 2500, 5, 3000, 5)`)
	defer st.Close()
	got, ok, err := st.Get(r.Key)
	if err != nil || !ok || got.Cold != 2500 || got.Idle != 3000 || got.Cycle != 0 || got.CycleReps != 0 {
		t.Fatalf("row from before cycles: %+v, %v, %v; want its cold and idle figures and no cycle", got, ok, err)
	}
	if err := st.PutCycle(r.Key, 1800, 9); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := st.Get(r.Key); got.Cycle != 1800 || got.CycleReps != 9 || got.Cold != 2500 {
		t.Errorf("after PutCycle: %+v; want cycle 1.8µs over 9 and the cold figure kept", got)
	}
	if err := st.Put(r); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := st.Get(r.Key); got.Cycle != 0 || got.CycleReps != 0 {
		t.Errorf("after a new Put: cycle %v over %d; want it cleared", got.Cycle, got.CycleReps)
	}
	missing := r.Key
	missing.Layers = "nope"
	for _, tc := range []struct {
		k    Key
		d    time.Duration
		n    int
		want string
	}{
		{missing, 1800, 9, "no measurement of"},
		{r.Key, 0, 9, "want both positive"},
		{r.Key, 1800, 0, "want both positive"},
	} {
		if err := st.PutCycle(tc.k, tc.d, tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PutCycle(%s, %v, %d): %v, want %q", tc.k.Layers, tc.d, tc.n, err, tc.want)
		}
	}
}

// TestStoreAddsCorunColumns: a version-2 store whose corun table predates
// its model_name column gains it on open, and takes co-run profiles again.
func TestStoreAddsCorunColumns(t *testing.T) {
	line := "\tmodel_name TEXT NOT NULL DEFAULT '',\n"
	if !strings.Contains(corunSchema, line) {
		t.Fatalf("the corun schema lacks %q", line)
	}
	path := olderStore(t, `DROP TABLE corun`, strings.Replace(corunSchema, line, "", 1))
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := testRecord(1)
	c := Corun{Key: r.Key, Alone: 1000, Points: []CorunPoint{{Load: 0.5, GBs: 5, Slowdown: 1.2}}, K: 0.4, Intensity: 0.3}
	if err := st.PutCorun(c); err != nil {
		t.Fatal(err)
	}
	if cs, err := st.Coruns(r.Device); err != nil || len(cs) != 1 || cs[0].K != 0.4 {
		t.Errorf("co-run profiles after adding model_name: %+v, %v", cs, err)
	}
}

func TestFitSensitivity(t *testing.T) {
	tests := []struct {
		name    string
		points  []CorunPoint
		wantK   float64
		wantRMS float64
	}{
		{"none", nil, 0, 0},
		{"linear", []CorunPoint{{Load: 0.25, Slowdown: 1.1}, {Load: 0.5, Slowdown: 1.2}, {Load: 1, Slowdown: 1.4}}, 0.4, 0},
		{"faster beside a load clamps to 0", []CorunPoint{{Load: 0.5, Slowdown: 0.9}}, 0, 0.1},
		{"clamped above", []CorunPoint{{Load: 0.1, Slowdown: 2}}, hw.MaxContentionSensitivity, 0.6},
	}
	for _, tc := range tests {
		k, rms := FitSensitivity(tc.points)
		if math.Abs(k-tc.wantK) > 1e-9 || math.Abs(rms-tc.wantRMS) > 1e-9 {
			t.Errorf("%s: k %v rms %v, want %v %v", tc.name, k, rms, tc.wantK, tc.wantRMS)
		}
	}
	sigma := ConfigSensitivity([]Corun{
		{Key: Key{Processor: "cpu0", Backend: "ort-cpu", DType: "float32"}, K: 0.2, Intensity: 0.1},
		{Key: Key{Processor: "cpu0", Backend: "ort-cpu", DType: "float32"}, K: 0.4, Intensity: 0.2},
	})
	if got := sigma["cpu0/ort-cpu/float32"]; math.Abs(got-2) > 1e-9 {
		t.Errorf("configuration sensitivity %v, want 2", got)
	}
}

func TestStoreBadFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("this is not sqlite\n", 400)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Another program's SQLite database.
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// A store from a future inlay.
	future := filepath.Join(dir, "future.db")
	st, err := Open(future)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	st.Close()

	for _, tc := range []struct {
		name, path, want string
	}{
		{"garbage", garbage, "not a profile store"},
		{"foreign", foreign, "not a profile store"},
		{"future", future, "schema version 99"},
		{"dir", dir, dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Open(tc.path)
			if err == nil {
				st.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.path) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s and saying %q", msg, tc.path, tc.want)
			}
		})
	}
}

func TestStoreConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	// Two handles, as two processes would have.
	var stores [2]*Store
	for i := range stores {
		st, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores[i] = st
	}
	const perWriter = 25
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 2; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				r := testRecord(w*1000 + i)
				if err := stores[w].Put(r); err != nil {
					errs <- err
					return
				}
			}
		}(w)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				if _, err := stores[1-w].Records("dev"); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	recs, err := stores[0].Records("dev")
	if err != nil || len(recs) != 2*perWriter {
		t.Errorf("Records = %d, %v; want %d", len(recs), err, 2*perWriter)
	}
}

// millis is xs, each in milliseconds, as durations.
func millis(xs ...int) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want Timing
	}{
		{"one", millis(5), Timing{Median: 5e6, P90: 5e6, Min: 5e6, Max: 5e6, Reps: 1}},
		{"odd", millis(3, 1, 2), Timing{Median: 2e6, P90: 3e6, Min: 1e6, Max: 3e6, Stddev: 1e6, Reps: 3}},
		{"even", millis(4, 1, 3, 2), Timing{Median: 2500e3, P90: 4e6, Min: 1e6, Max: 4e6, Stddev: 1290994, Reps: 4}},
		{"ten", millis(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), Timing{Median: 5500e3, P90: 9e6, Min: 1e6, Max: 10e6, Stddev: 3027650, Reps: 10}},
		{"none", nil, Timing{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summarize(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Summarize = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestStoreAddsHandOffStartColumns: a store whose handoffs table predates
// the start delays and the hand-off curve gains them on open; its rows
// read as not measured, and new ones keep theirs, curve included; a new
// hand-off without a curve clears the old one's.
func TestStoreAddsHandOffStartColumns(t *testing.T) {
	path := olderStore(t, `DROP TABLE handoffs`, `DROP TABLE handoff_curve`,
		`CREATE TABLE handoffs (device TEXT NOT NULL, pinned INTEGER NOT NULL, same_ns INTEGER NOT NULL, cross_ns INTEGER NOT NULL,
			samples INTEGER NOT NULL, measured_at TEXT NOT NULL, PRIMARY KEY (device, pinned))`,
		`INSERT INTO handoffs VALUES ('dev', 1, 5000, 90000, 40, '2026-12-01T00:00:00Z')`)
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hos, err := st.HandOffs("dev")
	if err != nil || len(hos) != 1 || hos[0].Cross != 90*time.Microsecond || hos[0].SleepRequests != 0 || hos[0].PollRequests != 0 || hos[0].CrossAfter != nil {
		t.Fatalf("the older row: %+v, %v; want its hand-offs, no start delays and no curve measured", hos, err)
	}
	us := time.Microsecond
	h := HandOff{Pinned: false, Same: 4 * us, Cross: 28 * us, Samples: 50,
		SleepStart: 310 * us, SleepRequests: 30, PollStart: 90 * us, PollRequests: 60,
		CrossAfter: cost.HandOffCurve{{After: 100 * us, Gap: 25 * us, Samples: 40}, {After: 900 * us, Gap: 60 * us, Samples: 30}}}
	if err := st.PutHandOff("dev", h); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*HandOff){
		"a negative start delay": func(b *HandOff) { b.SleepStart = -us },
		"a curve out of order":   func(b *HandOff) { b.CrossAfter = cost.HandOffCurve{h.CrossAfter[1], h.CrossAfter[0]} },
		"a curve with no samples": func(b *HandOff) {
			b.CrossAfter = cost.HandOffCurve{{After: us, Gap: us}}
		},
	} {
		bad := h
		mod(&bad)
		if err := st.PutHandOff("dev", bad); err == nil {
			t.Errorf("%s was stored", name)
		}
	}
	read := func() HandOff {
		t.Helper()
		hos, err := st.HandOffs("dev")
		if err != nil || len(hos) != 2 {
			t.Fatalf("HandOffs = %+v, %v", hos, err)
		}
		got := hos[0]
		got.MeasuredAt = time.Time{}
		return got
	}
	if got := read(); !reflect.DeepEqual(got, h) {
		t.Errorf("unpinned hand-off read back as %+v, want %+v", got, h)
	}
	h.CrossAfter = nil
	if err := st.PutHandOff("dev", h); err != nil {
		t.Fatal(err)
	}
	if got := read(); !reflect.DeepEqual(got, h) {
		t.Errorf("unpinned hand-off without a curve read back as %+v, want %+v", got, h)
	}
}

// rawStore writes a store file (in a temporary folder) as an older
// version wrote it: the given schema, the schema version, then the
// statements, the first of which inserts testRecord(1)'s key as the
// first eight values of a measurements row; it returns the file opened.
func rawStore(t *testing.T, schema string, version int, insert string, more ...string) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO schema_version (version) VALUES (?)`, version); err != nil {
		t.Fatal(err)
	}
	r := testRecord(1)
	if _, err := db.Exec(insert, r.Device, r.Model, r.Layers, r.Processor, r.Backend, r.DType, r.Shapes, r.ModelName); err != nil {
		t.Fatal(err)
	}
	for _, q := range more {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// olderStore makes a store as this code does, then rewrites it to an
// older one's shape with stmts, run on the file directly; it returns its
// path.
func olderStore(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
