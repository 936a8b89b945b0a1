// Package throughput holds throughput tables: for every job type (a model
// with its batch size) and scale factor (GPU count), the training steps per
// second the whole job makes on each GPU type, running alone, spread over
// servers, and sharing its GPUs with a partner (space sharing).
//
// Tables come from Gavel's measurements (Gavel, embedded) or from inlay's
// cost model (Estimate). A Table is read-only after construction and safe
// for concurrent use.
package throughput

import (
	"fmt"
	"sort"
	"strings"
)

// Key names a row of a table: a job type and its scale factor.
type Key struct {
	JobType string
	Scale   int
}

func (k Key) String() string { return fmt.Sprintf("%s x%d", k.JobType, k.Scale) }

// ID is a dense index of a Key in one Table (0 ≤ ID < NumKeys).
type ID int

// Table is a throughput table. Rows are keys, columns GPU types.
type Table struct {
	gpus   []string
	gpuIdx map[string]int
	keys   []Key
	idx    map[Key]ID
	// alone[id][g], spread[id][g]: steps/s, 0 when it cannot run there.
	alone  [][]float64
	spread [][]float64
	// pair[a][b] is nil when a and b never share, else per GPU type the
	// throughputs of a and of b when they share; {0, 0}: they cannot.
	pair [][][][2]float64
	// Source says where the figures come from.
	Source string
}

// New returns an empty table over the GPU types gpus.
func New(source string, gpus []string) *Table {
	t := &Table{gpus: append([]string(nil), gpus...), gpuIdx: map[string]int{}, idx: map[Key]ID{}, Source: source}
	for i, g := range t.gpus {
		t.gpuIdx[g] = i
	}
	return t
}

// Add returns the ID of k, adding an empty row when it is new.
func (t *Table) Add(k Key) ID {
	if id, ok := t.idx[k]; ok {
		return id
	}
	id := ID(len(t.keys))
	t.keys = append(t.keys, k)
	t.idx[k] = id
	t.alone = append(t.alone, make([]float64, len(t.gpus)))
	t.spread = append(t.spread, make([]float64, len(t.gpus)))
	for i := range t.pair {
		t.pair[i] = append(t.pair[i], nil)
	}
	t.pair = append(t.pair, make([][][2]float64, len(t.keys)))
	return id
}

// SetAlone sets k's throughput alone on gpu (consolidated on one server).
func (t *Table) SetAlone(k Key, gpu string, v float64) { t.alone[t.Add(k)][t.gpuIdx[gpu]] = v }

// SetSpread sets k's throughput when its GPUs are on different servers.
func (t *Table) SetSpread(k Key, gpu string, v float64) { t.spread[t.Add(k)][t.gpuIdx[gpu]] = v }

// SetPair sets the throughputs of a and b sharing gpu.
func (t *Table) SetPair(a, b Key, gpu string, va, vb float64) {
	ia, ib := t.Add(a), t.Add(b)
	g := t.gpuIdx[gpu]
	if t.pair[ia][ib] == nil {
		t.pair[ia][ib] = make([][2]float64, len(t.gpus))
	}
	if t.pair[ib][ia] == nil {
		t.pair[ib][ia] = make([][2]float64, len(t.gpus))
	}
	t.pair[ia][ib][g] = [2]float64{va, vb}
	t.pair[ib][ia][g] = [2]float64{vb, va}
}

// GPUs returns the table's GPU types in column order.
func (t *Table) GPUs() []string { return t.gpus }

// GPUIndex returns gpu's column, or -1.
func (t *Table) GPUIndex(gpu string) int {
	if i, ok := t.gpuIdx[gpu]; ok {
		return i
	}
	return -1
}

// NumKeys is the number of rows.
func (t *Table) NumKeys() int { return len(t.keys) }

// Key returns the key of id.
func (t *Table) Key(id ID) Key { return t.keys[id] }

// Lookup returns k's ID.
func (t *Table) Lookup(k Key) (ID, bool) {
	id, ok := t.idx[k]
	return id, ok
}

// Alone is id's throughput on column g (steps/s; 0: cannot run).
func (t *Table) Alone(id ID, g int) float64 { return t.alone[id][g] }

// Spread is id's throughput on column g with its GPUs on several servers;
// without a measurement, the consolidated figure.
func (t *Table) Spread(id ID, g int) float64 {
	if v := t.spread[id][g]; v > 0 {
		return v
	}
	return t.alone[id][g]
}

// HasSpread reports whether the table measured id spread over servers.
func (t *Table) HasSpread(id ID, g int) bool { return t.spread[id][g] > 0 }

// Pair returns the throughputs of a and b sharing column g; ok is false
// when they cannot share (not measured, or out of memory).
func (t *Table) Pair(a, b ID, g int) (ta, tb float64, ok bool) {
	p := t.pair[a][b]
	if p == nil {
		return 0, 0, false
	}
	v := p[g]
	return v[0], v[1], v[0] > 0 && v[1] > 0
}

// CanShare reports whether the table holds any pair figures.
func (t *Table) CanShare() bool {
	for _, row := range t.pair {
		for _, p := range row {
			if p != nil {
				return true
			}
		}
	}
	return false
}

// JobTypes returns the job types with a scale-factor-1 row, sorted.
func (t *Table) JobTypes() []string {
	var out []string
	for _, k := range t.keys {
		if k.Scale == 1 {
			out = append(out, k.JobType)
		}
	}
	sort.Strings(out)
	return out
}

// Scales returns the scale factors the table holds for jobType, ascending.
func (t *Table) Scales(jobType string) []int {
	var out []int
	for _, k := range t.keys {
		if k.JobType == jobType {
			out = append(out, k.Scale)
		}
	}
	sort.Ints(out)
	return out
}

// Resolve finds the row of a job: an error names what is missing (unknown
// job type; a scale factor the table lacks) in one line.
func (t *Table) Resolve(jobType string, scale int) (ID, error) {
	if id, ok := t.idx[Key{jobType, scale}]; ok {
		return id, nil
	}
	sc := t.Scales(jobType)
	if len(sc) == 0 {
		types := t.JobTypes()
		if len(types) > 6 {
			types = append(types[:6], "…")
		}
		return 0, fmt.Errorf("unknown job type %q (the %s table has %d, e.g. %s)", jobType, t.Source, len(t.JobTypes()), strings.Join(types, ", "))
	}
	return 0, fmt.Errorf("job type %q has no throughput for %d GPUs (scale factors: %v)", jobType, scale, sc)
}
