package runtime

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"

	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/sim"
)

// Backend is the only backend the runtime drives: ONNX Runtime's CPU
// execution provider.
const Backend = "ort-cpu"

// Runner runs one subgraph: inputs in the order of its input names,
// outputs in the order of its output names. *ort.Session is one.
type Runner interface {
	Run(inputs []*graph.Data) ([]*graph.Data, error)
}

var _ Runner = (*ort.Session)(nil)

// subgraph is one planned subgraph, ready to run.
type subgraph struct {
	label   string
	model   string // the workload model
	index   int    // position in the model's plan
	proc    int
	runner  Runner
	inputs  []string
	outputs []string
	// fromModel[i] says input i is one of the model's own inputs (it comes
	// from the input pool, not from another subgraph); pool[i] is then that
	// input's pool.
	fromModel []bool
	pool      [][]*graph.Data
}

// prepared is everything a run needs before the clock starts.
type prepared struct {
	prog *sim.Program
	// jobSub maps a compute job to its subgraph (nil for transfers);
	// jobCopy maps a transfer job to the tensors it copies.
	jobSub  []*subgraph
	jobCopy [][]string
	// pools maps model + "\x00" + input name to the tensors requests cycle
	// through.
	pools    map[string][]*graph.Data
	sessions []*ort.Session
	// byModel lists each workload model's subgraphs in plan order.
	byModel  map[string][]*subgraph
	warnings []string
}

func (p *prepared) close() {
	for _, s := range p.sessions {
		_ = s.Close()
	}
}

// checkProcessors is the first check of a run: every subgraph's processor
// is on the platform (a plan made on another machine may name cores this
// one lacks).
func checkProcessors(c *Config) error {
	pl := c.Platform
	for _, mp := range c.Plan.Models {
		for si, sg := range mp.Subgraphs {
			if !slices.Contains(pl.Names(), sg.Processor) {
				return fmt.Errorf("runtime: the plan puts model %q subgraph %d on processor %q, which platform %s lacks (it has %s)",
					mp.Model, si, sg.Processor, pl.Name, strings.Join(pl.Names(), ", "))
			}
		}
	}
	return nil
}

// check runs the checks that need no ONNX Runtime: processors, the plan's
// validity, the models' hashes.
func check(c *Config) error {
	if err := checkProcessors(c); err != nil {
		return err
	}
	if err := c.Plan.Validate(c.Workload, c.Platform); err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	if err := c.Plan.CheckHashes(c.Workload); err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	return nil
}

// prepare compiles the checked plan and creates the sessions and the input
// pools. On error nothing stays open.
func prepare(c *Config, rt *ort.Runtime) (_ *prepared, err error) {
	w, pl, p := c.Workload, c.Platform, c.Plan
	prog, err := sim.Compile(w, pl, c.Cost, p)
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	pr := &prepared{prog: prog, pools: map[string][]*graph.Data{}, byModel: map[string][]*subgraph{}}
	defer func() {
		if err != nil {
			pr.close()
		}
	}()
	rng := rand.New(rand.NewSource(c.Seed))
	for _, mp := range p.Models {
		wm := w.Model(mp.Model)
		lg := wm.Layers
		isInput := map[string]bool{}
		for _, in := range wm.Graph.Inputs {
			isInput[in] = true
		}
		for si, sg := range mp.Subgraphs {
			cfg, err := sg.Config(pl)
			if err != nil {
				return nil, fmt.Errorf("runtime: model %q subgraph %d: %w", mp.Model, si, err)
			}
			if cfg.Backend != Backend {
				return nil, fmt.Errorf("runtime: model %q subgraph %d: backend %q on %s: this runtime drives %s only",
					mp.Model, si, cfg.Backend, sg.Processor, Backend)
			}
			label := fmt.Sprintf("%s[%s]", mp.Model, sg.Layers.Key())
			data, err := onnx.ExportSubgraph(lg, sg.Layers)
			if err != nil {
				return nil, fmt.Errorf("runtime: %s: %w", label, err)
			}
			ins, outs := lg.Boundary(sg.Layers)
			opt := ort.SessionOptions{}
			if cores := pl.Processors[cfg.Proc].Cores; len(cores) > 0 {
				opt.IntraOpThreads = len(cores)
				opt.InterOpThreads = 1
			}
			sess, err := rt.NewSession(data, ins, outs, opt)
			if err != nil {
				return nil, fmt.Errorf("runtime: %s: %w", label, err)
			}
			pr.sessions = append(pr.sessions, sess)
			s := &subgraph{label: label, model: mp.Model, index: si, proc: int(cfg.Proc), runner: sess, inputs: ins, outputs: outs}
			if c.wrap != nil {
				s.runner = c.wrap(label, sess)
			}
			for _, in := range ins {
				s.fromModel = append(s.fromModel, isInput[in])
			}
			pr.byModel[mp.Model] = append(pr.byModel[mp.Model], s)
		}
		// The model's input pool, in input order (the rng's draws are
		// deterministic for a seed and plan).
		for _, in := range wm.Graph.Inputs {
			t := wm.Graph.Tensors[in]
			if t == nil {
				return nil, fmt.Errorf("runtime: model %q: input %q has no tensor", mp.Model, in)
			}
			key := mp.Model + "\x00" + in
			if v := c.Values[in]; v != nil {
				if v.DType != t.DType || !v.Dims.Equal(t.Shape) {
					return nil, fmt.Errorf("runtime: model %q: value of input %q is %s %s, the model takes %s %s",
						mp.Model, in, v.DType, v.Dims, t.DType, t.Shape)
				}
				pr.pools[key] = []*graph.Data{v}
				continue
			}
			if _, ok := t.Shape.Elements(); !ok {
				return nil, fmt.Errorf("runtime: model %q: input %q has shape %s; fix it in the workload's inputs", mp.Model, in, t.Shape)
			}
			for k := 0; k < c.Pool; k++ {
				pr.pools[key] = append(pr.pools[key], ort.RandomData(t.DType, t.Shape, rng))
			}
		}
		for _, s := range pr.byModel[mp.Model] {
			s.pool = make([][]*graph.Data, len(s.inputs))
			for i, in := range s.inputs {
				if s.fromModel[i] {
					s.pool[i] = pr.pools[mp.Model+"\x00"+in]
				}
			}
		}
	}
	jobs := prog.Jobs
	pr.jobSub = make([]*subgraph, len(jobs))
	pr.jobCopy = make([][]string, len(jobs))
	for ji, j := range jobs {
		model := prog.Models[j.Model].Name
		subs := pr.byModel[model]
		if j.Subgraph < 0 || j.Subgraph >= len(subs) {
			return nil, fmt.Errorf("runtime: job %d (%s): subgraph %d out of range", ji, j.Label, j.Subgraph)
		}
		switch j.Kind {
		case dispatch.Compute:
			pr.jobSub[ji] = subs[j.Subgraph]
		case dispatch.Transfer:
			if len(j.Deps) != 1 || jobs[j.Deps[0]].Kind != dispatch.Compute {
				return nil, fmt.Errorf("runtime: transfer %d (%s) does not follow one compute job", ji, j.Label)
			}
			from, to := subs[jobs[j.Deps[0]].Subgraph], subs[j.Subgraph]
			pr.jobCopy[ji] = intersect(from.outputs, to.inputs)
		}
	}
	return pr, nil
}

// warmup runs every model through its subgraphs in plan order, n times,
// and returns a warning per subgraph that failed.
func (pr *prepared) warmup(n int) []string {
	var warns []string
	models := slices.Sorted(maps.Keys(pr.byModel))
	failed := map[string]bool{}
	for k := 0; k < n; k++ {
		for _, m := range models {
			tensors := map[string]*graph.Data{}
			for _, s := range pr.byModel[m] {
				in := make([]*graph.Data, len(s.inputs))
				ok := true
				for i, name := range s.inputs {
					if s.fromModel[i] {
						in[i] = s.pool[i][0]
					} else if in[i] = tensors[name]; in[i] == nil {
						ok = false
					}
				}
				if !ok {
					continue // an earlier subgraph failed
				}
				out, err := s.runner.Run(in)
				if err != nil {
					if !failed[s.label] {
						failed[s.label] = true
						warns = append(warns, fmt.Sprintf("warm-up: %s: %v", s.label, err))
					}
					continue
				}
				for i, name := range s.outputs {
					tensors[name] = out[i]
				}
			}
		}
	}
	return warns
}

// intersect returns the names in both sorted lists, sorted.
func intersect(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}
