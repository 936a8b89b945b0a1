package throughput

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/internal/loadfile"
)

// gavelJSON is Gavel's scheduler/simulation_throughputs.json (MIT licence,
// gavel/LICENSE), unchanged.
//
//go:embed gavel/simulation_throughputs.json
var gavelJSON []byte

var (
	gavelOnce  sync.Once
	gavelTable *Table
	gavelErr   error
)

// Gavel returns the table of Gavel's measured throughputs on K80, P100 and
// V100 (26 job types; ResNet-18, ResNet-50, Transformer and LM also on 2, 4
// and 8 GPUs), with the co-located pairs and the unconsolidated figures.
// The table is shared: callers must not modify it.
func Gavel() (*Table, error) {
	gavelOnce.Do(func() { gavelTable, gavelErr = ParseGavel("gavel", gavelJSON) })
	return gavelTable, gavelErr
}

// LoadGavel reads a throughput file in Gavel's format.
func LoadGavel(path string) (*Table, error) {
	return loadfile.Read("cluster/throughput", path, ParseGavel)
}

var gavelKey = regexp.MustCompile(`^\('(.+)', (\d+)\)$`)

func parseGavelKey(s string) (Key, bool) {
	m := gavelKey.FindStringSubmatch(s)
	if m == nil {
		return Key{}, false
	}
	n, err := strconv.Atoi(m[2])
	if err != nil || n < 1 || n > 1024 {
		return Key{}, false
	}
	return Key{m[1], n}, true
}

// ParseGavel reads Gavel's format: worker type → "('JOB TYPE', SCALE)" →
// {"null": alone, "('OTHER', SCALE)": [this, other]}. Worker types named
// "X_unconsolidated" give the spread figures of X.
func ParseGavel(source string, data []byte) (*Table, error) {
	var raw map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("cluster/throughput: %s: %s", source, errline.JSON(data, err))
	}
	var gpus []string
	for w := range raw {
		if !strings.HasSuffix(w, "_unconsolidated") {
			gpus = append(gpus, w)
		}
	}
	sort.Strings(gpus)
	if len(gpus) == 0 {
		return nil, fmt.Errorf("cluster/throughput: %s: no worker types", source)
	}
	t := New(source, gpus)
	// Rows in sorted order, so that IDs do not depend on map order.
	for _, w := range gpus {
		for _, ks := range slices.Sorted(maps.Keys(raw[w])) {
			k, ok := parseGavelKey(ks)
			if !ok {
				return nil, fmt.Errorf("cluster/throughput: %s: %q: bad job key %q (want \"('TYPE', SCALE)\")", source, w, ks)
			}
			t.Add(k)
		}
	}
	for _, w := range slices.Sorted(maps.Keys(raw)) {
		base, spread := strings.CutSuffix(w, "_unconsolidated")
		if t.GPUIndex(base) < 0 {
			return nil, fmt.Errorf("cluster/throughput: %s: %q has no consolidated worker type %q", source, w, base)
		}
		for _, ks := range slices.Sorted(maps.Keys(raw[w])) {
			k, ok := parseGavelKey(ks)
			if !ok {
				return nil, fmt.Errorf("cluster/throughput: %s: %q: bad job key %q (want \"('TYPE', SCALE)\")", source, w, ks)
			}
			for _, ps := range slices.Sorted(maps.Keys(raw[w][ks])) {
				v := raw[w][ks][ps]
				if ps == "null" {
					var x float64
					if err := json.Unmarshal(v, &x); err != nil || !(x >= 0) {
						return nil, fmt.Errorf("cluster/throughput: %s: %q: %q: alone throughput must be a non-negative number", source, w, ks)
					}
					if spread {
						t.SetSpread(k, base, x)
					} else {
						t.SetAlone(k, base, x)
					}
					continue
				}
				if spread {
					continue // Gavel measured no spread pairs worth using
				}
				pk, ok := parseGavelKey(ps)
				if !ok {
					return nil, fmt.Errorf("cluster/throughput: %s: %q: %q: bad partner key %q", source, w, ks, ps)
				}
				var xy [2]float64
				if err := json.Unmarshal(v, &xy); err != nil || !(xy[0] >= 0 && xy[1] >= 0) {
					return nil, fmt.Errorf("cluster/throughput: %s: %q: %q: %q: want a pair of non-negative numbers", source, w, ks, ps)
				}
				if _, known := t.Lookup(pk); !known {
					return nil, fmt.Errorf("cluster/throughput: %s: %q: %q: partner %q has no row", source, w, ks, ps)
				}
				t.SetPair(k, pk, base, xy[0], xy[1])
			}
		}
	}
	return t, nil
}
