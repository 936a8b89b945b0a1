package profile

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/internal/assets"
)

// SchemaVersion is the version of the store's tables this package writes.
// Version 2 added the corun table (inlay profile --corun); a version-1
// file is migrated when it is opened (the table is created, nothing else
// changes).
const SchemaVersion = 2

// Store is the profile store: one SQLite file (see the package doc). It is
// safe for concurrent use, and several processes may open one file at once
// (WAL mode: readers never wait for a writer).
type Store struct {
	db   *sql.DB
	path string
}

// Key identifies one measurement.
type Key struct {
	Device string
	// Model is the model's content hash (ModelID).
	Model string
	// Layers is the layer set's key (graph.LayerSet.Key).
	Layers    string
	Processor string
	Backend   string
	DType     string
	// Shapes is ShapesKey of the subgraph's inputs.
	Shapes string
}

func (k Key) String() string {
	return fmt.Sprintf("%s %.12s layers %s on %s/%s/%s [%s]", k.Device, k.Model, k.Layers, k.Processor, k.Backend, k.DType, k.Shapes)
}

// Record is one stored measurement.
type Record struct {
	Key
	// ModelName is the model's name when measured (informational).
	ModelName string
	Timing
	ORTVersion string
	// Error, when not empty, says why the subgraph could not be measured;
	// Timing is then zero.
	Error      string
	MeasuredAt time.Time
}

// DefaultStorePath is the store used when no --profiles is given:
// profiles.db in the cache folder that scripts/fetch.sh fills
// (assets.Dir: $INLAY_CACHE, else $XDG_CACHE_HOME/inlay, else
// ~/.cache/inlay).
func DefaultStorePath() string {
	return filepath.Join(assets.Dir(), "profiles.db")
}

const schema = `
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE devices (
	name        TEXT PRIMARY KEY,
	platform    TEXT NOT NULL,
	ort_version TEXT NOT NULL,
	updated_at  TEXT NOT NULL
);
CREATE TABLE measurements (
` + keyColumns + `	model_name  TEXT NOT NULL,
` + timingColumns + `	error       TEXT NOT NULL,
	measured_at TEXT NOT NULL,
	cold_ns     INTEGER NOT NULL DEFAULT 0,
	cold_reps   INTEGER NOT NULL DEFAULT 0,
	idle_ns     INTEGER NOT NULL DEFAULT 0,
	idle_reps   INTEGER NOT NULL DEFAULT 0,
	cycle_ns    INTEGER NOT NULL DEFAULT 0,
	cycle_reps  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (device, model, layers, processor, backend, dtype, shapes)
);
CREATE TABLE calibrations (
	device      TEXT NOT NULL,
	processor   TEXT NOT NULL,
	efficiency  TEXT NOT NULL,
	mape_before REAL NOT NULL,
	mape_after  REAL NOT NULL,
	samples     INTEGER NOT NULL,
	fitted_at   TEXT NOT NULL,
	cold_a       REAL NOT NULL DEFAULT 0,
	cold_b       REAL NOT NULL DEFAULT 0,
	cold_samples INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (device, processor)
);` + insituSchema

// keyColumns are the columns of a Key, the primary key of the
// measurements, the in-situ figures and the co-run profiles.
const keyColumns = `	device      TEXT NOT NULL,
	model       TEXT NOT NULL,
	layers      TEXT NOT NULL,
	processor   TEXT NOT NULL,
	backend     TEXT NOT NULL,
	dtype       TEXT NOT NULL,
	shapes      TEXT NOT NULL,
`

// timingColumns are a timing's statistics and the ONNX Runtime version
// it was taken with, in the measurements and the in-situ figures.
const timingColumns = `	median_ns   INTEGER NOT NULL,
	p90_ns      INTEGER NOT NULL,
	min_ns      INTEGER NOT NULL,
	max_ns      INTEGER NOT NULL,
	stddev_ns   INTEGER NOT NULL,
	reps        INTEGER NOT NULL,
	ort_version TEXT NOT NULL,
`

// insituSchema is the tables of in-situ measurements (PutInSitu,
// AddArrivalLag), of measured hand-offs (PutHandOff; handoff_curve holds
// each one's HandOff.CrossAfter) and of the speed
// the last profile's figures were taken at (PutSpeeds). They came
// after schema version 1 was published and is added to older version-1
// files when they are opened, so it needs no new version.
const insituSchema = `
CREATE TABLE IF NOT EXISTS insitu (
` + keyColumns + `	model_name  TEXT NOT NULL,
	typical_ns  INTEGER NOT NULL,
` + timingColumns + `	measured_at TEXT NOT NULL,
	PRIMARY KEY (device, model, layers, processor, backend, dtype, shapes)
);
CREATE TABLE IF NOT EXISTS insitu_arrivals (
	device         TEXT PRIMARY KEY,
	lag_ns         INTEGER NOT NULL,
	requests       INTEGER NOT NULL,
	recorded_at    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS handoffs (
	device      TEXT NOT NULL,
	pinned      INTEGER NOT NULL,
	same_ns     INTEGER NOT NULL,
	cross_ns    INTEGER NOT NULL,
	samples     INTEGER NOT NULL,
	measured_at TEXT NOT NULL,
	sleep_start_ns INTEGER NOT NULL DEFAULT 0,
	sleep_requests INTEGER NOT NULL DEFAULT 0,
	poll_start_ns  INTEGER NOT NULL DEFAULT 0,
	poll_requests  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (device, pinned)
);
CREATE TABLE IF NOT EXISTS handoff_curve (
	device      TEXT NOT NULL,
	pinned      INTEGER NOT NULL,
	after_ns    INTEGER NOT NULL,
	gap_ns      INTEGER NOT NULL,
	samples     INTEGER NOT NULL,
	PRIMARY KEY (device, pinned, after_ns)
);
CREATE TABLE IF NOT EXISTS speeds (
	device      TEXT NOT NULL,
	core        INTEGER NOT NULL,
	normal_ns   INTEGER NOT NULL,
	median_ns   INTEGER NOT NULL,
	checks      INTEGER NOT NULL,
	slow        INTEGER NOT NULL,
	measured_at TEXT NOT NULL,
	PRIMARY KEY (device, core)
);`

// Open opens the store at path, creating the file (and its folder) and the
// tables on first use. A file that is not a profile store (not SQLite,
// corrupt, another program's database, a newer schema) is a one-line error
// naming the file.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("profile: store: empty path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("profile: store %s: %w", path, err)
	}
	dsn := path + "?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, storeError(path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.init(); err != nil {
		db.Close()
		return nil, storeError(path, err)
	}
	return s, nil
}

// storeError makes one line naming the file.
func storeError(path string, err error) error {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") || strings.Contains(msg, "SQLITE_NOTADB") {
		return fmt.Errorf("profile: store %s: not a profile store (%s)", path, msg)
	}
	return fmt.Errorf("profile: store %s: %s", path, msg)
}

// queryer runs a query: the store's database, or a transaction on it.
type queryer interface {
	Query(query string, args ...any) (*sql.Rows, error)
}

// scanAll runs query on q and scans every row it returns with scan, in
// order. The errors are the database's, unwrapped (the store's methods
// name the store: storeError).
func scanAll[T any](q queryer, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// storeRows is scanAll on the store's database, its errors naming the
// store (storeError).
func storeRows[T any](s *Store, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	out, err := scanAll(s.db, scan, query, args...)
	if err != nil {
		return nil, storeError(s.path, err)
	}
	return out, nil
}

// scanString scans a row of one text column.
func scanString(rows *sql.Rows) (string, error) {
	var v string
	err := rows.Scan(&v)
	return v, err
}

func (s *Store) init() error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	tables, err := scanAll(tx, scanString, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		if _, err := tx.Exec(schema); err != nil {
			return err
		}
		if _, err := tx.Exec(corunSchema); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO schema_version (version) VALUES (?)`, SchemaVersion); err != nil {
			return err
		}
		return tx.Commit()
	}
	var version int
	if err := tx.QueryRow(`SELECT version FROM schema_version`).Scan(&version); err != nil {
		return fmt.Errorf("not a profile store (it holds tables %s but no schema version)", strings.Join(tables, ", "))
	}
	if version > SchemaVersion || version < 1 {
		return fmt.Errorf("schema version %d, this inlay reads versions 1 to %d", version, SchemaVersion)
	}
	if _, err := tx.Exec(insituSchema); err != nil {
		return err
	}
	if _, err := tx.Exec(corunSchema); err != nil {
		return err
	}
	if version < SchemaVersion {
		if _, err := tx.Exec(`UPDATE schema_version SET version = ?`, SchemaVersion); err != nil {
			return err
		}
	}
	for _, add := range []struct {
		table string
		cols  [][2]string
	}{
		{"measurements", coldColumns}, {"measurements", idleColumns}, {"measurements", cycleColumns},
		{"calibrations", coldFitColumns}, {"corun", corunAddedColumns}, {"handoffs", handOffStartColumns},
	} {
		if err := addColumns(tx, add.table, add.cols); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Version reads the schema version recorded in the file.
func (s *Store) Version() (int, error) {
	var v int
	if err := s.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil {
		return 0, storeError(s.path, err)
	}
	return v, nil
}

// coldColumns came to the measurements table after schema version 1 was
// published; opening an older version-1 file adds them (zero: no cold
// runs), so they need no new version.
var coldColumns = [][2]string{
	{"cold_ns", "INTEGER NOT NULL DEFAULT 0"},
	{"cold_reps", "INTEGER NOT NULL DEFAULT 0"},
}

// idleColumns came to the measurements table after coldColumns: the cold
// runs after idling (Timing.Idle; zero: none), added the same way.
var idleColumns = [][2]string{
	{"idle_ns", "INTEGER NOT NULL DEFAULT 0"},
	{"idle_reps", "INTEGER NOT NULL DEFAULT 0"},
}

// cycleColumns came to the measurements table after idleColumns: the
// subgraph's time inside its plan's cycle (Timing.Cycle; zero: none),
// added the same way. PutCycle sets them; Put clears them (a new measurement
// of the subgraph has not been timed in a cycle yet).
var cycleColumns = [][2]string{
	{"cycle_ns", "INTEGER NOT NULL DEFAULT 0"},
	{"cycle_reps", "INTEGER NOT NULL DEFAULT 0"},
}

// corunAddedColumns are the corun table's columns added after it was
// first created (a version-2 store from before them lacks them).
var corunAddedColumns = [][2]string{
	{"model_name", "TEXT NOT NULL DEFAULT ''"},
}

// coldFitColumns came to the calibrations table with coldColumns (a
// ColdFit; zero: none).
var coldFitColumns = [][2]string{
	{"cold_a", "REAL NOT NULL DEFAULT 0"},
	{"cold_b", "REAL NOT NULL DEFAULT 0"},
	{"cold_samples", "INTEGER NOT NULL DEFAULT 0"},
}

// addColumns adds the columns a table lacks.
func addColumns(tx *sql.Tx, table string, cols [][2]string) error {
	names, err := scanAll(tx, scanString, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, c := range cols {
		if !have[c[0]] {
			if _, err := tx.Exec(`ALTER TABLE ` + table + ` ADD COLUMN ` + c[0] + ` ` + c[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// complete is an error for a key that lacks a device, model, layer set or
// processor (op names the store's operation).
func (k Key) complete(path, op string) error {
	if k.Device == "" || k.Model == "" || k.Layers == "" || k.Processor == "" {
		return fmt.Errorf("profile: store %s: %s: device, model, layers and processor are required (%s)", path, op, k)
	}
	return nil
}

// stamp is the time a row is recorded with: at, or now when at is zero.
func stamp(at time.Time) string {
	if at.IsZero() {
		at = time.Now()
	}
	return at.UTC().Format(time.RFC3339Nano)
}

// Put inserts or replaces a measurement. A zero MeasuredAt is now.
func (s *Store) Put(r Record) error {
	if err := r.Key.complete(s.path, "put"); err != nil {
		return err
	}
	at := stamp(r.MeasuredAt)
	_, err := s.db.Exec(`INSERT INTO measurements (device, model, layers, processor, backend, dtype, shapes,
		model_name, median_ns, p90_ns, min_ns, max_ns, stddev_ns, reps, ort_version, error, measured_at, cold_ns, cold_reps, idle_ns, idle_reps)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (device, model, layers, processor, backend, dtype, shapes) DO UPDATE SET
		model_name = excluded.model_name, median_ns = excluded.median_ns, p90_ns = excluded.p90_ns,
		min_ns = excluded.min_ns, max_ns = excluded.max_ns, stddev_ns = excluded.stddev_ns, reps = excluded.reps,
		ort_version = excluded.ort_version, error = excluded.error, measured_at = excluded.measured_at,
		cold_ns = excluded.cold_ns, cold_reps = excluded.cold_reps, idle_ns = excluded.idle_ns, idle_reps = excluded.idle_reps,
		cycle_ns = 0, cycle_reps = 0`,
		r.Device, r.Model, r.Layers, r.Processor, r.Backend, r.DType, r.Shapes, r.ModelName,
		int64(r.Median), int64(r.P90), int64(r.Min), int64(r.Max), int64(r.Stddev), r.Reps,
		r.ORTVersion, r.Error, at, int64(r.Cold), r.ColdReps, int64(r.Idle), r.IdleReps)
	if err != nil {
		return storeError(s.path, err)
	}
	return nil
}

const recordColumns = `device, model, layers, processor, backend, dtype, shapes, model_name,
	median_ns, p90_ns, min_ns, max_ns, stddev_ns, reps, ort_version, error, measured_at, cold_ns, cold_reps, idle_ns, idle_reps,
	cycle_ns, cycle_reps`

func scanRecord(sc interface{ Scan(...any) error }) (Record, error) {
	var r Record
	var med, p90, mn, mx, sd, cold, idle, cycle int64
	var at string
	err := sc.Scan(&r.Device, &r.Model, &r.Layers, &r.Processor, &r.Backend, &r.DType, &r.Shapes, &r.ModelName,
		&med, &p90, &mn, &mx, &sd, &r.Reps, &r.ORTVersion, &r.Error, &at, &cold, &r.ColdReps, &idle, &r.IdleReps,
		&cycle, &r.CycleReps)
	if err != nil {
		return r, err
	}
	r.Median, r.P90, r.Min, r.Max, r.Stddev = time.Duration(med), time.Duration(p90), time.Duration(mn), time.Duration(mx), time.Duration(sd)
	r.Cold, r.Idle, r.Cycle = time.Duration(cold), time.Duration(idle), time.Duration(cycle)
	r.MeasuredAt, _ = time.Parse(time.RFC3339Nano, at)
	return r, nil
}

// PutCycle sets the cycle figure of a stored measurement (Timing.Cycle:
// the median of reps runs inside its plan's cycle); a key the store does
// not hold is an error. A later Put of the key clears it.
func (s *Store) PutCycle(k Key, median time.Duration, reps int) error {
	if median <= 0 || reps < 1 {
		return fmt.Errorf("profile: store %s: put cycle: %s: median %v over %d runs: want both positive", s.path, k, median, reps)
	}
	res, err := s.db.Exec(`UPDATE measurements SET cycle_ns = ?, cycle_reps = ? WHERE device = ? AND model = ? AND layers = ?
		AND processor = ? AND backend = ? AND dtype = ? AND shapes = ?`,
		int64(median), reps, k.Device, k.Model, k.Layers, k.Processor, k.Backend, k.DType, k.Shapes)
	if err != nil {
		return storeError(s.path, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("profile: store %s: put cycle: no measurement of %s", s.path, k)
	}
	return nil
}

// Get returns the measurement with the key; ok is false when there is none.
func (s *Store) Get(k Key) (r Record, ok bool, err error) {
	row := s.db.QueryRow(`SELECT `+recordColumns+` FROM measurements WHERE device = ? AND model = ? AND layers = ?
		AND processor = ? AND backend = ? AND dtype = ? AND shapes = ?`,
		k.Device, k.Model, k.Layers, k.Processor, k.Backend, k.DType, k.Shapes)
	r, err = scanRecord(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, storeError(s.path, err)
	}
	return r, true, nil
}

// Records returns a device's measurements (all devices' when device is
// ""), ordered by key.
func (s *Store) Records(device string) ([]Record, error) {
	q := `SELECT ` + recordColumns + ` FROM measurements`
	var args []any
	if device != "" {
		q += ` WHERE device = ?`
		args = append(args, device)
	}
	q += ` ORDER BY device, model, processor, backend, dtype, shapes, layers`
	return storeRows(s, func(rows *sql.Rows) (Record, error) { return scanRecord(rows) }, q, args...)
}

// InSitu is an in-situ measurement: a subgraph's times inside a real run
// (inlay run --record), each from the runtime handing a run to its worker
// to the runtime taking its report, so that it counts the runtime's own
// delays and the slower runs of a subgraph among other work. Typical is
// the figure the Estimator uses: the mean of the fastest InSituKeep of the
// samples (NewInSitu). A request's latency is a sum of such right-skewed
// times, and the median of a sum lies above the sum of their medians, near
// the sum of their means; but the slowest runs are mostly stalls (another
// process or the garbage collector holding the core) that hit few
// requests, so they shape the p99, not the p50, and are left out.
type InSitu struct {
	Key
	ModelName string
	Typical   time.Duration
	Timing
	ORTVersion string
	MeasuredAt time.Time
}

// PutInSitu inserts or replaces an in-situ measurement (a zero MeasuredAt
// is now). They live apart from the profiler's measurements: Get, Records
// and the calibration never see them.
func (s *Store) PutInSitu(r InSitu) error {
	if err := r.Key.complete(s.path, "put in-situ"); err != nil {
		return err
	}
	at := stamp(r.MeasuredAt)
	_, err := s.db.Exec(`INSERT INTO insitu (device, model, layers, processor, backend, dtype, shapes,
		model_name, typical_ns, median_ns, p90_ns, min_ns, max_ns, stddev_ns, reps, ort_version, measured_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (device, model, layers, processor, backend, dtype, shapes) DO UPDATE SET
		model_name = excluded.model_name, typical_ns = excluded.typical_ns, median_ns = excluded.median_ns,
		p90_ns = excluded.p90_ns, min_ns = excluded.min_ns, max_ns = excluded.max_ns, stddev_ns = excluded.stddev_ns,
		reps = excluded.reps, ort_version = excluded.ort_version, measured_at = excluded.measured_at`,
		r.Device, r.Model, r.Layers, r.Processor, r.Backend, r.DType, r.Shapes, r.ModelName, int64(r.Typical),
		int64(r.Median), int64(r.P90), int64(r.Min), int64(r.Max), int64(r.Stddev), r.Reps,
		r.ORTVersion, at)
	if err != nil {
		return storeError(s.path, err)
	}
	return nil
}

// InSituRecords returns a device's in-situ measurements (all devices'
// when device is ""), ordered by key.
func (s *Store) InSituRecords(device string) ([]InSitu, error) {
	if device == "" {
		return s.inSituWhere("")
	}
	return s.inSituWhere(` WHERE device = ?`, device)
}

func (s *Store) inSituWhere(where string, args ...any) ([]InSitu, error) {
	q := `SELECT device, model, layers, processor, backend, dtype, shapes, model_name,
		typical_ns, median_ns, p90_ns, min_ns, max_ns, stddev_ns, reps, ort_version, measured_at FROM insitu` + where +
		` ORDER BY device, model, processor, backend, dtype, shapes, layers`
	return storeRows(s, func(rows *sql.Rows) (InSitu, error) {
		var r InSitu
		var typical, med, p90, mn, mx, sd int64
		var at string
		err := rows.Scan(&r.Device, &r.Model, &r.Layers, &r.Processor, &r.Backend, &r.DType, &r.Shapes, &r.ModelName,
			&typical, &med, &p90, &mn, &mx, &sd, &r.Reps, &r.ORTVersion, &at)
		r.Typical, r.Median, r.P90, r.Min, r.Max, r.Stddev = time.Duration(typical), time.Duration(med), time.Duration(p90), time.Duration(mn), time.Duration(mx), time.Duration(sd)
		r.MeasuredAt, _ = time.Parse(time.RFC3339Nano, at)
		return r, err
	}, q, args...)
}

// ArrivalLag is a device's arrival lag over the real runs recorded: from a
// request's scheduled arrival to the runtime taking it (the timer's
// wake-up), which latency counts and the simulator does not. Lag is what
// the runs gave (inlay run records each run's median), averaged over their
// requests.
type ArrivalLag struct {
	Lag      time.Duration
	Requests int
}

// AddArrivalLag merges a run's arrival lag over requests into the
// device's (an average weighted by requests).
func (s *Store) AddArrivalLag(device string, lag time.Duration, requests int) error {
	if device == "" || requests <= 0 {
		return fmt.Errorf("profile: store %s: arrival lag: a device and a positive request count are required", s.path)
	}
	old, _, err := s.ArrivalLag(device)
	if err != nil {
		return err
	}
	n := old.Requests + requests
	mean := (float64(old.Lag)*float64(old.Requests) + float64(lag)*float64(requests)) / float64(n)
	_, err = s.db.Exec(`INSERT INTO insitu_arrivals (device, lag_ns, requests, recorded_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (device) DO UPDATE SET lag_ns = excluded.lag_ns, requests = excluded.requests,
		recorded_at = excluded.recorded_at`, device, int64(mean+0.5), n, time.Now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return storeError(s.path, err)
	}
	return nil
}

// ArrivalLag returns the device's recorded arrival lag; ok is false when
// there is none.
func (s *Store) ArrivalLag(device string) (a ArrivalLag, ok bool, err error) {
	var lag int64
	err = s.db.QueryRow(`SELECT lag_ns, requests FROM insitu_arrivals WHERE device = ?`, device).Scan(&lag, &a.Requests)
	if errors.Is(err, sql.ErrNoRows) {
		return ArrivalLag{}, false, nil
	}
	if err != nil {
		return ArrivalLag{}, false, storeError(s.path, err)
	}
	a.Lag = time.Duration(lag)
	return a, true, nil
}

// HandOff is a device's measured runtime hand-off (runtime.ProbeHandOff):
// the median delay from a subgraph's end to the start of the next one that
// waits for it, on the same processor and on another one, with the
// runtime's workers pinned to their cores or not. Samples is the number of
// hand-offs timed for the smaller of the two.
type HandOff struct {
	Pinned      bool
	Same, Cross time.Duration
	Samples     int
	MeasuredAt  time.Time
	// The probe runs' median delays from a request's arrival to its first
	// subgraph's start, with the event loop sleeping to its arrivals and
	// polling for them (runtime.StartDelays), over the requests counted
	// beside each; a count of 0: not measured (a store or an agent from
	// before them).
	SleepStart, PollStart       time.Duration
	SleepRequests, PollRequests int
	// CrossAfter is the hand-off between processors by how long the
	// subgraph before it ran (runtime.HandOffProbe.CrossAfter); empty for
	// a store or an agent from before it, where Cross serves every span.
	CrossAfter cost.HandOffCurve
}

// handOffStartColumns came to the handoffs table after it was first
// created; opening an older store adds them (zero: not measured).
var handOffStartColumns = [][2]string{
	{"sleep_start_ns", "INTEGER NOT NULL DEFAULT 0"},
	{"sleep_requests", "INTEGER NOT NULL DEFAULT 0"},
	{"poll_start_ns", "INTEGER NOT NULL DEFAULT 0"},
	{"poll_requests", "INTEGER NOT NULL DEFAULT 0"},
}

// PutHandOff stores the device's hand-off for h.Pinned, replacing the one
// measured before.
func (s *Store) PutHandOff(device string, h HandOff) error {
	if device == "" || h.Samples <= 0 || h.Same < 0 || h.Cross < 0 || h.SleepStart < 0 || h.PollStart < 0 || h.SleepRequests < 0 || h.PollRequests < 0 {
		return fmt.Errorf("profile: store %s: hand-off: a device, positive samples and non-negative delays and counts are required", s.path)
	}
	if err := h.CrossAfter.Validate(); err != nil {
		return fmt.Errorf("profile: store %s: %w", s.path, err)
	}
	at := stamp(h.MeasuredAt)
	tx, err := s.db.Begin()
	if err != nil {
		return storeError(s.path, err)
	}
	defer tx.Rollback()
	_, err = tx.Exec(`INSERT INTO handoffs (device, pinned, same_ns, cross_ns, samples, measured_at, sleep_start_ns, sleep_requests, poll_start_ns, poll_requests)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (device, pinned) DO UPDATE SET same_ns = excluded.same_ns, cross_ns = excluded.cross_ns,
		samples = excluded.samples, measured_at = excluded.measured_at, sleep_start_ns = excluded.sleep_start_ns,
		sleep_requests = excluded.sleep_requests, poll_start_ns = excluded.poll_start_ns, poll_requests = excluded.poll_requests`,
		device, h.Pinned, int64(h.Same), int64(h.Cross), h.Samples, at,
		int64(h.SleepStart), h.SleepRequests, int64(h.PollStart), h.PollRequests)
	if err != nil {
		return storeError(s.path, err)
	}
	if _, err := tx.Exec(`DELETE FROM handoff_curve WHERE device = ? AND pinned = ?`, device, h.Pinned); err != nil {
		return storeError(s.path, err)
	}
	for _, p := range h.CrossAfter {
		if _, err := tx.Exec(`INSERT INTO handoff_curve (device, pinned, after_ns, gap_ns, samples) VALUES (?, ?, ?, ?, ?)`,
			device, h.Pinned, int64(p.After), int64(p.Gap), p.Samples); err != nil {
			return storeError(s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return storeError(s.path, err)
	}
	return nil
}

// HandOffs returns the device's measured hand-offs, unpinned first, each
// with its curve.
func (s *Store) HandOffs(device string) ([]HandOff, error) {
	hos, err := storeRows(s, func(rows *sql.Rows) (HandOff, error) {
		var h HandOff
		var same, cross, sleep, poll int64
		var at string
		err := rows.Scan(&h.Pinned, &same, &cross, &h.Samples, &at, &sleep, &h.SleepRequests, &poll, &h.PollRequests)
		h.Same, h.Cross = time.Duration(same), time.Duration(cross)
		h.SleepStart, h.PollStart = time.Duration(sleep), time.Duration(poll)
		h.MeasuredAt, _ = time.Parse(time.RFC3339Nano, at)
		return h, err
	}, `SELECT pinned, same_ns, cross_ns, samples, measured_at, sleep_start_ns, sleep_requests, poll_start_ns, poll_requests
		FROM handoffs WHERE device = ? ORDER BY pinned`, device)
	if err != nil {
		return nil, err
	}
	type point struct {
		pinned bool
		cost.HandOffPoint
	}
	points, err := storeRows(s, func(rows *sql.Rows) (point, error) {
		var p point
		var after, gap int64
		err := rows.Scan(&p.pinned, &after, &gap, &p.Samples)
		p.After, p.Gap = time.Duration(after), time.Duration(gap)
		return p, err
	}, `SELECT pinned, after_ns, gap_ns, samples FROM handoff_curve WHERE device = ? ORDER BY pinned, after_ns`, device)
	if err != nil {
		return nil, err
	}
	for _, p := range points {
		for i := range hos {
			if hos[i].Pinned == p.pinned {
				hos[i].CrossAfter = append(hos[i].CrossAfter, p.HandOffPoint)
			}
		}
	}
	return hos, nil
}

// PutSpeeds stores, per core, the speed guard's summary of the reference
// times the device's profile took its figures at (SpeedStats.Cores),
// replacing what the device had: the figures are the last profile's.
func (s *Store) PutSpeeds(device string, cores []CoreSpeed) error {
	if device == "" {
		return fmt.Errorf("profile: store %s: speeds: a device is required", s.path)
	}
	for _, c := range cores {
		if c.Core < 0 || c.Checks <= 0 || c.Normal <= 0 || c.Median <= 0 || c.Slow < 0 || c.Slow > c.Checks {
			return fmt.Errorf("profile: store %s: speeds: core %d: want a core >= 0, positive checks and reference times, and 0 to checks slow (got %+v)", s.path, c.Core, c)
		}
	}
	tx, err := s.db.Begin()
	if err != nil {
		return storeError(s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM speeds WHERE device = ?`, device); err != nil {
		return storeError(s.path, err)
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)
	for _, c := range cores {
		if _, err := tx.Exec(`INSERT INTO speeds (device, core, normal_ns, median_ns, checks, slow, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			device, c.Core, int64(c.Normal), int64(c.Median), c.Checks, c.Slow, at); err != nil {
			return storeError(s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return storeError(s.path, err)
	}
	return nil
}

// Speeds returns what PutSpeeds stored for the device, by core (none for
// a store profiled before there was a speeds table).
func (s *Store) Speeds(device string) ([]CoreSpeed, error) {
	return storeRows(s, func(rows *sql.Rows) (CoreSpeed, error) {
		var c CoreSpeed
		var normal, median int64
		err := rows.Scan(&c.Core, &normal, &median, &c.Checks, &c.Slow)
		c.Normal, c.Median = time.Duration(normal), time.Duration(median)
		return c, err
	}, `SELECT core, normal_ns, median_ns, checks, slow FROM speeds WHERE device = ? ORDER BY core`, device)
}

// MergeInSitu adds a run's in-situ measurement to the one stored under the
// same key (PutInSitu when there is none): Reps add up, Typical is the
// runs' Typical averaged over their samples, Min and Max those of all the
// runs; Median, P90 and Stddev are the latest run's (they do not merge).
// Recording every run makes the figures those of the typical load.
func (s *Store) MergeInSitu(r InSitu) error {
	old, ok, err := s.inSitu(r.Key)
	if err != nil {
		return err
	}
	if ok && old.Reps > 0 && r.Reps > 0 {
		n1, n2 := float64(old.Reps), float64(r.Reps)
		r.Typical = time.Duration((n1*float64(old.Typical)+n2*float64(r.Typical))/(n1+n2) + 0.5)
		r.Reps += old.Reps
		r.Min, r.Max = min(r.Min, old.Min), max(r.Max, old.Max)
	}
	return s.PutInSitu(r)
}

// InSituKeep is the share of a run's in-situ samples, the fastest, that
// NewInSitu averages into Typical.
const InSituKeep = 0.9

// NewInSitu summarises one run's in-situ samples of a subgraph (at least
// one): Typical is the mean of the fastest InSituKeep of them, Timing
// their Summarize.
func NewInSitu(k Key, modelName string, samples []time.Duration, ortVersion string) InSitu {
	r := InSitu{Key: k, ModelName: modelName, Timing: Summarize(samples), ORTVersion: ortVersion}
	if len(samples) == 0 {
		return r
	}
	s := append([]time.Duration(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	s = s[:max(1, int(math.Ceil(InSituKeep*float64(len(s)))))]
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	r.Typical = time.Duration(sum/float64(len(s)) + 0.5)
	return r
}

func (s *Store) inSitu(k Key) (InSitu, bool, error) {
	recs, err := s.inSituWhere(` WHERE device = ? AND model = ? AND layers = ? AND processor = ? AND backend = ? AND dtype = ? AND shapes = ?`,
		k.Device, k.Model, k.Layers, k.Processor, k.Backend, k.DType, k.Shapes)
	if err != nil || len(recs) == 0 {
		return InSitu{}, false, err
	}
	return recs[0], true, nil
}

// DeviceRow is one device that measured into the store.
type DeviceRow struct {
	Name, Platform, ORTVersion string
	UpdatedAt                  time.Time
	// Measurements counts its rows (failures included); InSitu its in-situ
	// measurements.
	Measurements, InSitu int
}

// PutDevice records (or updates) a device and the platform it was profiled
// as.
func (s *Store) PutDevice(name, platform, ortVersion string) error {
	_, err := s.db.Exec(`INSERT INTO devices (name, platform, ort_version, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET platform = excluded.platform, ort_version = excluded.ort_version,
		updated_at = excluded.updated_at`, name, platform, ortVersion, time.Now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return storeError(s.path, err)
	}
	return nil
}

// Devices lists the recorded devices by name.
func (s *Store) Devices() ([]DeviceRow, error) {
	return storeRows(s, func(rows *sql.Rows) (DeviceRow, error) {
		var d DeviceRow
		var at string
		err := rows.Scan(&d.Name, &d.Platform, &d.ORTVersion, &at, &d.Measurements, &d.InSitu)
		d.UpdatedAt, _ = time.Parse(time.RFC3339Nano, at)
		return d, err
	}, `SELECT d.name, d.platform, d.ort_version, d.updated_at,
		(SELECT COUNT(*) FROM measurements m WHERE m.device = d.name),
		(SELECT COUNT(*) FROM insitu i WHERE i.device = d.name) FROM devices d ORDER BY d.name`)
}

// DeviceFor picks the device whose measurements stand for a platform: the
// most recently updated device recorded with that platform name; ok is
// false when there is none.
func (s *Store) DeviceFor(platform string) (name string, ok bool, err error) {
	err = s.db.QueryRow(`SELECT name FROM devices WHERE platform = ? ORDER BY updated_at DESC, name LIMIT 1`, platform).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, storeError(s.path, err)
	}
	return name, true, nil
}

// CalibrationRow is one processor's fitted efficiency factors on a device.
type CalibrationRow struct {
	Device, Processor string
	Efficiency        cost.Efficiency
	// MAPEBefore and MAPEAfter are the errors on held-back subgraphs.
	MAPEBefore, MAPEAfter float64
	Samples               int
	FittedAt              time.Time
	// Cold is the cold-cache correction (ClassFit.Cold).
	Cold ColdFit
}

// PutCalibration records (or replaces) a processor's fitted factors.
func (s *Store) PutCalibration(c CalibrationRow) error {
	data, err := json.Marshal(c.Efficiency)
	if err != nil {
		return fmt.Errorf("profile: store %s: %w", s.path, err)
	}
	at := stamp(c.FittedAt)
	_, err = s.db.Exec(`INSERT INTO calibrations (device, processor, efficiency, mape_before, mape_after, samples, fitted_at,
		cold_a, cold_b, cold_samples)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (device, processor) DO UPDATE SET efficiency = excluded.efficiency,
		mape_before = excluded.mape_before, mape_after = excluded.mape_after, samples = excluded.samples,
		fitted_at = excluded.fitted_at, cold_a = excluded.cold_a, cold_b = excluded.cold_b, cold_samples = excluded.cold_samples`,
		c.Device, c.Processor, string(data), c.MAPEBefore, c.MAPEAfter, c.Samples,
		at, c.Cold.A, c.Cold.B, c.Cold.Samples)
	if err != nil {
		return storeError(s.path, err)
	}
	return nil
}

// Calibrations returns a device's fitted factors by processor name.
func (s *Store) Calibrations(device string) (map[string]CalibrationRow, error) {
	type row struct {
		c   CalibrationRow
		eff string
	}
	rows, err := storeRows(s, func(rows *sql.Rows) (row, error) {
		var r row
		var at string
		err := rows.Scan(&r.c.Device, &r.c.Processor, &r.eff, &r.c.MAPEBefore, &r.c.MAPEAfter, &r.c.Samples, &at,
			&r.c.Cold.A, &r.c.Cold.B, &r.c.Cold.Samples)
		r.c.FittedAt, _ = time.Parse(time.RFC3339Nano, at)
		return r, err
	}, `SELECT device, processor, efficiency, mape_before, mape_after, samples, fitted_at,
		cold_a, cold_b, cold_samples FROM calibrations WHERE device = ? ORDER BY processor`, device)
	if err != nil {
		return nil, err
	}
	out := map[string]CalibrationRow{}
	for _, r := range rows {
		c := r.c
		if err := json.Unmarshal([]byte(r.eff), &c.Efficiency); err != nil {
			return nil, fmt.Errorf("profile: store %s: calibration of %s: %w", s.path, c.Processor, err)
		}
		out[c.Processor] = c
	}
	return out, nil
}
