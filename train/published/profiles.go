package published

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/internal/loadfile"
	"github.com/inlay-dev/inlay/train"
)

// LayerCase is a profiled transformer layer: the mean forward and backward
// time of a model's transformer layers at one micro-batch and
// tensor-parallel degree on one GPU type (Sailor's per-GPU profiles,
// measured with CUDA events around each layer).
type LayerCase struct {
	Label     string
	Model     train.Model
	GPU       string
	TP, Micro int
	IntraGBs  float64
	Precision string
	FwdS      float64
	BwdS      float64
}

// sailorProfileModels are the models of Sailor's profiles.
var sailorProfileModels = map[string]string{"OPT-350": "opt-350m", "GPT-Neo-2.7": "gpt-neo-2.7b", "LLAMA-3-8": "llama-3-8b", "OPT-30": "opt-30b"}

// LoadProfiles reads Sailor's profiles flattened to CSV
// (sailor/profiles_tmp_flat.csv: model, gpu_type, micro_batch, tp, layer,
// fwd_s, bwd_s, update_s). Layer 0 (the embedding) and the last (the
// head) are left out; a (model, GPU, micro-batch, tp) with a zero time is
// left out. Sailor's runs are FP32 with TF32 matrix products.
func LoadProfiles(path string) ([]LayerCase, error) {
	return loadfile.Read("published", path, ParseProfiles)
}

// ParseProfiles is LoadProfiles on bytes; file names them in errors.
func ParseProfiles(file string, data []byte) ([]LayerCase, error) {
	file = filepath.Base(file)
	rd := csv.NewReader(bytes.NewReader(data))
	header, err := rd.Read()
	if err != nil {
		return nil, fmt.Errorf("published: %s: %v", file, err)
	}
	want := []string{"model", "gpu_type", "micro_batch", "tp", "layer", "fwd_s", "bwd_s"}
	if len(header) < len(want) || strings.Join(header[:len(want)], ",") != strings.Join(want, ",") {
		return nil, fmt.Errorf("published: %s: header must start %s", file, strings.Join(want, ","))
	}
	type key struct {
		model, gpu string
		mb, tp     int
	}
	type acc struct {
		f, b  []float64
		layer []int
	}
	groups := map[key]*acc{}
	var order []key
	err = eachRecord(rd, file, func(line int, rec []string) error {
		var n [3]int
		var err error
		for i, c := range []int{2, 3, 4} {
			if n[i], err = strconv.Atoi(rec[c]); err != nil || n[i] < 0 || n[i] > 1<<20 {
				return fmt.Errorf("published: %s:%d: %s: %q is not a count", file, line, want[c], rec[c])
			}
		}
		f, err1 := strconv.ParseFloat(rec[5], 64)
		b, err2 := strconv.ParseFloat(rec[6], 64)
		if err1 != nil || err2 != nil || f < 0 || b < 0 || f > 1e6 || b > 1e6 {
			return fmt.Errorf("published: %s:%d: fwd_s and bwd_s must be seconds", file, line)
		}
		k := key{rec[0], rec[1], n[0], n[1]}
		a := groups[k]
		if a == nil {
			a = &acc{}
			groups[k] = a
			order = append(order, k)
		}
		a.f = append(a.f, f)
		a.b = append(a.b, b)
		a.layer = append(a.layer, n[2])
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.model != b.model {
			return a.model < b.model
		}
		if a.gpu != b.gpu {
			return a.gpu < b.gpu
		}
		if a.mb != b.mb {
			return a.mb < b.mb
		}
		return a.tp < b.tp
	})
	var out []LayerCase
	for _, k := range order {
		preset, ok := sailorProfileModels[k.model]
		if !ok {
			continue
		}
		m, _ := train.Preset(preset)
		g, _, intra, _, ok := train.SailorGPU(k.gpu)
		if !ok || k.mb == 0 || k.tp == 0 || m.Heads%k.tp != 0 {
			continue
		}
		a := groups[k]
		var f, b float64
		n := 0
		bad := false
		for i, l := range a.layer {
			if l < 1 || l > m.Layers {
				continue
			}
			if a.f[i] <= 0 || a.b[i] <= 0 {
				bad = true
			}
			f += a.f[i]
			b += a.b[i]
			n++
		}
		if n == 0 || bad {
			continue
		}
		if k.tp == 1 {
			intra = 1 // no collective
		}
		out = append(out, LayerCase{Label: fmt.Sprintf("%s %s mb%d tp%d", k.model, k.gpu, k.mb, k.tp), Model: m, GPU: g.Name,
			TP: k.tp, Micro: k.mb, IntraGBs: intra, Precision: "tf32", FwdS: f / float64(n), BwdS: b / float64(n)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("published: %s: no usable profile", file)
	}
	return out, nil
}

// PredictLayer is the layer's predicted forward and backward time with
// eff as its GPU type's efficiency.
func PredictLayer(c *LayerCase, eff train.Efficiency) (fwd, bwd float64) {
	g, _ := train.LookupGPU(c.GPU)
	g = g.WithEfficiency(eff)
	return train.LayerTimes(&c.Model, &g, c.TP, c.Micro, c.Precision, c.IntraGBs)
}
