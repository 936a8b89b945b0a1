// Package sia reads Sia's heterogeneous-cluster benchmark (SOSP 2023) at run
// time from a folder (by default ../shared/sia beside the checkout): the
// cluster and simulator parameters (cluster.json), the per-model throughput
// profiles per GPU type (placements-*.csv, scalability-*.csv), the
// statistical-efficiency traces (validation-<batch>.csv), the Philly and
// Helios (saturn) workloads and the published results (sia_table3.csv).
//
// The files carry no licence upstream: nothing here embeds them. Every
// reader reports bad input as one line naming the file and the line.
package sia

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/internal/errline"
)

// DefaultDir is where the benchmark lives relative to the project checkout.
const DefaultDir = "../shared/sia"

// NodeType is one kind of server of the cluster.
type NodeType struct {
	// Suffix names the profile files (placements-<suffix>.csv).
	Suffix    string `json:"profile_suffix"`
	PaperName string `json:"paper_name"`
	GPU       string `json:"gpu"`
	MemoryGB  int    `json:"gpu_memory_gb"`
	PerNode   int    `json:"gpus_per_node"`
	Nodes     int    `json:"nodes"`
}

// Cluster is cluster.json: the cluster and the simulator's parameters.
type Cluster struct {
	Name      string     `json:"name"`
	NodeTypes []NodeType `json:"node_types"`
	// RoundSeconds is the round length per policy family (sia, pollux,
	// gavel, ...).
	RoundSeconds map[string]float64 `json:"round_length_s"`
	SiaDefaults  struct {
		P       float64 `json:"p"`
		LambdaN float64 `json:"lambda_n"`
		LambdaA float64 `json:"lambda_a"`
	} `json:"sia_defaults"`
	Calibration struct {
		Reference string             `json:"calibrate_cluster"`
		Slowdowns map[string]float64 `json:"slowdowns"`
	} `json:"calibration"`
	MaxEpochs map[string]int `json:"max_epochs"`
	// RescaleSeconds is the checkpoint-restore delay per model ("other"
	// for the rest).
	RescaleSeconds map[string]float64 `json:"rescale_time_s"`
}

// Scaled returns a copy with every node count multiplied by n (Sia's
// --cluster_scale).
func (c *Cluster) Scaled(n int) *Cluster {
	out := *c
	out.NodeTypes = append([]NodeType(nil), c.NodeTypes...)
	for i := range out.NodeTypes {
		out.NodeTypes[i].Nodes *= n
	}
	return &out
}

// Rescale is model m's restart delay in seconds.
func (c *Cluster) Rescale(m string) float64 {
	if v, ok := c.RescaleSeconds[m]; ok {
		return v
	}
	return c.RescaleSeconds["other"]
}

// ParseCluster reads cluster.json.
func ParseCluster(file string, data []byte) (*Cluster, error) {
	var c Cluster
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %s", file, errline.JSON(data, err))
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", file, fmt.Sprintf(format, a...))
	}
	if len(c.NodeTypes) == 0 {
		return nil, bad("node_types: none")
	}
	seen := map[string]bool{}
	for i, t := range c.NodeTypes {
		switch {
		case t.Suffix == "" || strings.ContainsAny(t.Suffix, `/\`) || t.Suffix == "." || t.Suffix == "..":
			return nil, bad("node_types[%d]: profile_suffix must be a plain name, got %s", i, errline.Key(t.Suffix))
		case seen[t.Suffix]:
			return nil, bad("node_types[%d]: duplicate profile_suffix %s", i, errline.Key(t.Suffix))
		case t.PerNode < 1 || t.PerNode > 64:
			return nil, bad("node_types[%d]: gpus_per_node must be 1..64, got %d", i, t.PerNode)
		case t.Nodes < 1 || t.Nodes > 100000:
			return nil, bad("node_types[%d]: nodes must be 1..100000, got %d", i, t.Nodes)
		}
		seen[t.Suffix] = true
	}
	if len(c.MaxEpochs) == 0 {
		return nil, bad("max_epochs: none")
	}
	for m, e := range c.MaxEpochs {
		if e < 1 || e > 100000 {
			return nil, bad("max_epochs: %s: want 1..100000, got %d", errline.Key(m), e)
		}
	}
	for m, v := range c.RescaleSeconds {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, bad("rescale_time_s: %s: want a non-negative number", errline.Key(m))
		}
	}
	for m, v := range c.Calibration.Slowdowns {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, bad("calibration.slowdowns: %s: want a positive number", errline.Key(m))
		}
	}
	for p, v := range c.RoundSeconds {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, bad("round_length_s: %s: want a positive number", errline.Key(p))
		}
	}
	if d := c.SiaDefaults; d.P >= 1 || math.IsNaN(d.P) || d.LambdaN < 0 || d.LambdaA < 0 {
		return nil, bad("sia_defaults: want p < 1 and non-negative lambdas")
	}
	return &c, nil
}

// table is a CSV file read by header name.
type table struct {
	file string
	cols map[string]int
	rows [][]string
	line []int
}

// readTable reads a CSV with a header; need are the columns it must have.
func readTable(file string, data []byte, need ...string) (*table, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	head, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, want a header line", file)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s", file, errline.OneLine(err))
	}
	t := &table{file: file, cols: map[string]int{}}
	for i, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := t.cols[h]; dup {
			return nil, fmt.Errorf("%s:1: duplicate column %s", file, errline.Key(h))
		}
		t.cols[h] = i
	}
	var missing []string
	for _, n := range need {
		if _, ok := t.cols[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		var hs []string
		for _, h := range head {
			hs = append(hs, errline.Key(h))
		}
		return nil, fmt.Errorf("%s:1: missing column %s (the header has %s)", file, strings.Join(missing, ", "), strings.Join(hs, ","))
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s", file, errline.OneLine(err))
		}
		line, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != len(head) {
			return nil, fmt.Errorf("%s:%d: %d fields, the header has %d", file, line, len(rec), len(head))
		}
		if len(t.rows) >= 1_000_000 {
			return nil, fmt.Errorf("%s:%d: more than 1,000,000 rows", file, line)
		}
		t.rows = append(t.rows, rec)
		t.line = append(t.line, line)
	}
	return t, nil
}

func (t *table) str(i int, col string) string { return strings.TrimSpace(t.rows[i][t.cols[col]]) }

// num reads a finite number, at least lo.
func (t *table) num(i int, col string, lo float64) (float64, error) {
	s := t.str(i, col)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v < lo {
		return 0, fmt.Errorf("%s:%d: %s: want a number of at least %g, got %s", t.file, t.line[i], col, lo, errline.Key(s))
	}
	return v, nil
}

// Sample is one measured step time.
type Sample struct {
	// Nodes and Replicas: how many servers and GPUs (data-parallel
	// replicas) the job spanned.
	Nodes, Replicas int
	LocalBatch      float64
	// Step and Sync are seconds per step and the part spent synchronising.
	Step, Sync float64
}

// ParsePlacements reads placements-<suffix>.csv.
func ParsePlacements(file string, data []byte) ([]Sample, error) {
	t, err := readTable(file, data, "placement", "local_bsz", "step_time", "sync_time")
	if err != nil {
		return nil, err
	}
	var out []Sample
	for i := range t.rows {
		p := t.str(i, "placement")
		if p == "" || len(p) > 64 {
			return nil, fmt.Errorf("%s:%d: placement: want 1 to 64 digits, got %s", file, t.line[i], errline.Key(p))
		}
		s := Sample{Nodes: len(p)}
		for _, r := range p {
			if r < '1' || r > '9' {
				return nil, fmt.Errorf("%s:%d: placement: want digits 1-9 (GPUs per node), got %s", file, t.line[i], errline.Key(p))
			}
			s.Replicas += int(r - '0')
		}
		if err := t.sample(i, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (t *table) sample(i int, s *Sample) error {
	var err error
	if s.LocalBatch, err = t.num(i, "local_bsz", 1); err != nil {
		return err
	}
	if s.Step, err = t.num(i, "step_time", 0); err != nil {
		return err
	}
	if s.Sync, err = t.num(i, "sync_time", 0); err != nil {
		return err
	}
	if !(s.Step > 0) {
		return fmt.Errorf("%s:%d: step_time must be positive", t.file, t.line[i])
	}
	return nil
}

// ParseScalability reads scalability-<suffix>.csv.
func ParseScalability(file string, data []byte) ([]Sample, error) {
	t, err := readTable(file, data, "num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time")
	if err != nil {
		return nil, err
	}
	var out []Sample
	for i := range t.rows {
		n, err := t.num(i, "num_nodes", 1)
		if err != nil {
			return nil, err
		}
		r, err := t.num(i, "num_replicas", 1)
		if err != nil {
			return nil, err
		}
		if n != math.Trunc(n) || r != math.Trunc(r) || n > r || r > 1e5 {
			return nil, fmt.Errorf("%s:%d: want whole num_nodes ≤ num_replicas ≤ 100000, got %g and %g", file, t.line[i], n, r)
		}
		s := Sample{Nodes: int(n), Replicas: int(r)}
		if err := t.sample(i, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Epoch is one row of a validation trace.
type Epoch struct {
	// Progress is cumulative progress at the epoch's end, in iterations
	// at the smallest batch size weighted by statistical efficiency.
	Progress float64
	// GradSqr and GradVar are the gradient's squared norm and variance
	// (Pollux's efficiency model).
	GradSqr, GradVar float64
}

// ParseValidation reads validation-<batch>.csv.
func ParseValidation(file string, data []byte) ([]Epoch, error) {
	t, err := readTable(file, data, "progress", "grad_sqr", "grad_var")
	if err != nil {
		return nil, err
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("%s: no epochs", file)
	}
	out := make([]Epoch, len(t.rows))
	for i := range t.rows {
		e := &out[i]
		if e.Progress, err = t.num(i, "progress", 0); err != nil {
			return nil, err
		}
		if e.GradSqr, err = t.num(i, "grad_sqr", 0); err != nil {
			return nil, err
		}
		if e.GradVar, err = t.num(i, "grad_var", 0); err != nil {
			return nil, err
		}
		if i > 0 && e.Progress < out[i-1].Progress {
			return nil, fmt.Errorf("%s:%d: progress decreases", file, t.line[i])
		}
	}
	return out, nil
}

// Job is one line of a workload.
type Job struct {
	Name string
	// Arrival is seconds from the trace's start.
	Arrival float64
	// Model is the application ("cifar10").
	Model string
	// GPUs and Batch are the requested GPUs and total batch size (the
	// TunedJobs configuration).
	GPUs  int
	Batch int
	// Category is "adaptive" (default), "scale-gpus" or "rigid".
	Category string
	// Line is the job's line in its file.
	Line int
}

// Categories a workload line may carry.
var Categories = []string{"adaptive", "scale-gpus", "rigid"}

// ParseWorkload reads a workload CSV (name,time,application,num_replicas,
// batch_size[,category]); arrivals must not decrease.
func ParseWorkload(file string, data []byte) ([]Job, error) {
	t, err := readTable(file, data, "name", "time", "application", "num_replicas", "batch_size")
	if err != nil {
		return nil, err
	}
	_, hasCat := t.cols["category"]
	var out []Job
	names := map[string]bool{}
	for i := range t.rows {
		j := Job{Name: t.str(i, "name"), Model: t.str(i, "application"), Category: "adaptive", Line: t.line[i]}
		if j.Name == "" || names[j.Name] {
			return nil, fmt.Errorf("%s:%d: name: want a unique non-empty name, got %s", file, t.line[i], errline.Key(j.Name))
		}
		names[j.Name] = true
		if j.Model == "" {
			return nil, fmt.Errorf("%s:%d: application is empty", file, t.line[i])
		}
		if j.Arrival, err = t.num(i, "time", 0); err != nil {
			return nil, err
		}
		if len(out) > 0 && j.Arrival < out[len(out)-1].Arrival {
			return nil, fmt.Errorf("%s:%d: time %g is before the previous line's %g (arrivals must not decrease)", file, t.line[i], j.Arrival, out[len(out)-1].Arrival)
		}
		g, err := t.num(i, "num_replicas", 1)
		if err != nil {
			return nil, err
		}
		b, err := t.num(i, "batch_size", 1)
		if err != nil {
			return nil, err
		}
		if g != math.Trunc(g) || g > 4096 || b != math.Trunc(b) || b > 1<<24 {
			return nil, fmt.Errorf("%s:%d: want whole num_replicas ≤ 4096 and batch_size ≤ 16777216, got %g and %g", file, t.line[i], g, b)
		}
		j.GPUs, j.Batch = int(g), int(b)
		if hasCat {
			if c := t.str(i, "category"); c != "" {
				j.Category = c
			}
			ok := false
			for _, c := range Categories {
				ok = ok || c == j.Category
			}
			if !ok {
				return nil, fmt.Errorf("%s:%d: category: want %s, got %s", file, t.line[i], strings.Join(Categories, ", "), errline.Key(j.Category))
			}
		}
		out = append(out, j)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no jobs", file)
	}
	return out, nil
}

// Published is one row of sia_table3.csv.
type Published struct {
	Source, Setting, Trace, Policy string
	AvgJCT, P99JCT, Makespan       float64 // hours; NaN when not given
	GPUHoursPerJob, RestartsPerJob float64
}

// ParsePublished reads sia_table3.csv.
func ParsePublished(file string, data []byte) ([]Published, error) {
	t, err := readTable(file, data, "source", "setting", "trace", "policy", "avg_jct_h")
	if err != nil {
		return nil, err
	}
	opt := func(i int, col string) (float64, error) {
		if _, ok := t.cols[col]; !ok || t.str(i, col) == "" {
			return math.NaN(), nil
		}
		return t.num(i, col, 0)
	}
	var out []Published
	for i := range t.rows {
		p := Published{Source: t.str(i, "source"), Setting: t.str(i, "setting"), Trace: t.str(i, "trace"), Policy: t.str(i, "policy")}
		if p.AvgJCT, err = t.num(i, "avg_jct_h", 0); err != nil {
			return nil, err
		}
		for col, dst := range map[string]*float64{"p99_jct_h": &p.P99JCT, "makespan_h": &p.Makespan, "gpu_h_per_job": &p.GPUHoursPerJob, "restarts_per_job": &p.RestartsPerJob} {
			if *dst, err = opt(i, col); err != nil {
				return nil, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// Profile is one model's measurements on one GPU type.
type Profile struct {
	Placements, Scalability []Sample
}

// Model is one model's data.
type Model struct {
	Name string
	// Profiles by profile suffix; a type without files is absent.
	Profiles map[string]*Profile
	// Validation by total batch size, ascending in Batches.
	Batches    []int
	Validation map[int][]Epoch
}

// Bench is the whole benchmark.
type Bench struct {
	Dir       string
	Cluster   *Cluster
	Models    map[string]*Model
	Published []Published
}

// ErrMissing says the benchmark's files are not there.
var ErrMissing = errors.New("Sia's benchmark is read at run time from ../shared/sia (or the folder given with --sia): copy the shared folder beside the checkout")

func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster/sia: %w", err)
	}
	return data, nil
}

// Load reads cluster.json, every model under traces/ and sia_table3.csv
// from dir.
func Load(dir string) (*Bench, error) {
	data, err := readFile(filepath.Join(dir, "cluster.json"))
	if err != nil {
		return nil, err
	}
	b := &Bench{Dir: dir, Models: map[string]*Model{}}
	if b.Cluster, err = ParseCluster(filepath.Join(dir, "cluster.json"), data); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(filepath.Join(dir, "traces"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "traces"), ErrMissing)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		m, err := loadModel(filepath.Join(dir, "traces", e.Name()), e.Name(), b.Cluster)
		if err != nil {
			return nil, err
		}
		b.Models[m.Name] = m
	}
	if len(b.Models) == 0 {
		return nil, fmt.Errorf("%s: no model folders: %w", filepath.Join(dir, "traces"), ErrMissing)
	}
	p := filepath.Join(dir, "sia_table3.csv")
	if data, err = readFile(p); err != nil {
		return nil, err
	}
	if b.Published, err = ParsePublished(p, data); err != nil {
		return nil, err
	}
	return b, nil
}

func loadModel(dir, name string, c *Cluster) (*Model, error) {
	m := &Model{Name: name, Profiles: map[string]*Profile{}, Validation: map[int][]Epoch{}}
	for _, t := range c.NodeTypes {
		pp := filepath.Join(dir, "placements-"+t.Suffix+".csv")
		data, err := os.ReadFile(pp)
		if errors.Is(err, os.ErrNotExist) {
			continue // the model was not profiled on this type
		}
		if err != nil {
			return nil, fmt.Errorf("cluster/sia: %w", err)
		}
		p := &Profile{}
		if p.Placements, err = ParsePlacements(pp, data); err != nil {
			return nil, err
		}
		sp := filepath.Join(dir, "scalability-"+t.Suffix+".csv")
		if data, err = os.ReadFile(sp); err == nil {
			if p.Scalability, err = ParseScalability(sp, data); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cluster/sia: %w", err)
		}
		m.Profiles[t.Suffix] = p
	}
	files, _ := filepath.Glob(filepath.Join(dir, "validation-*.csv"))
	for _, f := range files {
		s := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "validation-"), ".csv")
		bs, err := strconv.Atoi(s)
		if err != nil || bs < 1 {
			return nil, fmt.Errorf("%s: want validation-<batch size>.csv", f)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("cluster/sia: %w", err)
		}
		if m.Validation[bs], err = ParseValidation(f, data); err != nil {
			return nil, err
		}
		m.Batches = append(m.Batches, bs)
	}
	sort.Ints(m.Batches)
	if len(m.Profiles) == 0 {
		return nil, fmt.Errorf("%s: no placements-<type>.csv for any GPU type of cluster.json", dir)
	}
	if len(m.Batches) == 0 {
		return nil, fmt.Errorf("%s: no validation-<batch>.csv", dir)
	}
	return m, nil
}

// Workloads reads every CSV of dir/workloads/<set>, in name order
// (workload-2 before workload-10).
func (b *Bench) Workloads(set string) (names []string, jobs [][]Job, err error) {
	dir := filepath.Join(b.Dir, "workloads", set)
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("%s: no workload files: %w", dir, ErrMissing)
	}
	sort.Slice(files, func(i, k int) bool { return naturalLess(filepath.Base(files[i]), filepath.Base(files[k])) })
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("cluster/sia: %w", err)
		}
		js, err := ParseWorkload(f, data)
		if err != nil {
			return nil, nil, err
		}
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".csv"))
		jobs = append(jobs, js)
	}
	return names, jobs, nil
}

// naturalLess orders names with their digit runs compared as numbers.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			x, _ := strconv.Atoi(a[:da])
			y, _ := strconv.Atoi(b[:db])
			if x != y {
				return x < y
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
