package job

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/inlay-dev/inlay/cluster/throughput"
)

// GenConfig configures Generate. The distributions are Gavel's
// (scheduler/utils.py generate_job and the simulator's arrival process):
//
//   - job type uniform over the table's single-GPU job types;
//   - run time on the reference GPU, in seconds, 60·10^U(1.5, 3) with
//     probability 0.8, else 60·10^U(3, 4); steps = run time × the reference
//     throughput at the job's scale factor;
//   - with MultiGPU, the scale factor is 1, 2, 4 or 8 with probabilities
//     0.70, 0.10, 0.15 and 0.05, drawn before the type; a job with more than
//     one GPU draws its type among those the table holds at that scale;
//   - arrivals Poisson at Rate jobs per hour, the first at 0; with Static
//     every job arrives at 0.
type GenConfig struct {
	Jobs      int
	Rate      float64 // jobs per hour; ignored when Static
	Seed      uint64
	MultiGPU  bool
	Static    bool
	Reference string // reference GPU type; default "v100" (or the table's last)
	// MultiPriority gives 20% of the jobs weight 5, as Gavel's option does.
	MultiPriority bool
	// Resources draws per-GPU CPU and memory demands (for multi-resource
	// packing): 2-12 cores and 8-64 GiB, uniform.
	Resources bool
	// Elastic gives every distributed job an elastic range from 1 GPU to
	// twice its scale factor (at most 8), with the table's scale factors as
	// its speedup profile.
	Elastic bool
	// DAGStages > 1 makes every job a chain of that many stages of the same
	// type, each with an equal share of the steps, the last two in parallel
	// after the one before them (so the DAG is not just a chain).
	DAGStages int
}

// Generate draws a trace. The same configuration gives the same jobs.
func Generate(cfg GenConfig, t *throughput.Table) ([]Job, error) {
	if cfg.Jobs < 1 || cfg.Jobs > maxJobs {
		return nil, fmt.Errorf("cluster/job: --jobs must be between 1 and %d, got %d", maxJobs, cfg.Jobs)
	}
	if !cfg.Static && !(cfg.Rate > 0 && !math.IsInf(cfg.Rate, 0)) {
		return nil, fmt.Errorf("cluster/job: --rate must be a positive number of jobs per hour, got %g", cfg.Rate)
	}
	ref := cfg.Reference
	if ref == "" {
		ref = "v100"
		if t.GPUIndex(ref) < 0 {
			ref = t.GPUs()[len(t.GPUs())-1]
		}
	}
	g := t.GPUIndex(ref)
	if g < 0 {
		return nil, fmt.Errorf("cluster/job: reference GPU %q not in the %s table (%v)", ref, t.Source, t.GPUs())
	}
	types := t.JobTypes()
	byScale := map[int][]string{}
	for _, jt := range types {
		for _, s := range t.Scales(jt) {
			id, _ := t.Lookup(throughput.Key{JobType: jt, Scale: s})
			if t.Alone(id, g) > 0 {
				byScale[s] = append(byScale[s], jt)
			}
		}
	}
	if len(byScale[1]) == 0 {
		return nil, fmt.Errorf("cluster/job: the %s table has no single-GPU job type that runs on %s", t.Source, ref)
	}
	// Separate streams, so that the arrival process does not shift the
	// jobs' draws (and a static trace has the same jobs as a dynamic one).
	jobRNG := rand.New(rand.NewPCG(cfg.Seed, 0x6a6f6273))
	arrRNG := rand.New(rand.NewPCG(cfg.Seed, 0x61727276))
	jobs := make([]Job, cfg.Jobs)
	at := 0.0
	for i := range jobs {
		scale := 1
		if cfg.MultiGPU {
			switch r := jobRNG.Float64(); {
			case r >= 0.95:
				scale = 8
			case r >= 0.8:
				scale = 4
			case r >= 0.7:
				scale = 2
			}
		}
		pool := byScale[scale]
		if len(pool) == 0 {
			scale, pool = 1, byScale[1]
		}
		var runTime float64
		if jobRNG.Float64() >= 0.8 {
			runTime = 60 * math.Pow(10, 3+jobRNG.Float64())
		} else {
			runTime = 60 * math.Pow(10, 1.5+1.5*jobRNG.Float64())
		}
		jt := pool[jobRNG.IntN(len(pool))]
		id, _ := t.Lookup(throughput.Key{JobType: jt, Scale: scale})
		weight := 1.0
		if cfg.MultiPriority && jobRNG.Float64() < 0.2 {
			weight = 5
		}
		if !cfg.Static && i > 0 {
			at += arrRNG.ExpFloat64() * 3600 / cfg.Rate
		}
		jobs[i] = Job{
			ID: i, Type: jt, GPUs: scale, Steps: math.Round(runTime * t.Alone(id, g)),
			Arrival: math.Round(at*1000) / 1000, Weight: weight, Duration: math.Round(runTime*10) / 10,
			User: fmt.Sprintf("user%d", i%16),
		}
		if jobs[i].Steps < 1 {
			jobs[i].Steps = 1
		}
		if cfg.Resources {
			jobs[i].CPUs = float64(2 + jobRNG.IntN(11))
			jobs[i].MemoryGiB = float64(8 + jobRNG.IntN(57))
		}
		if cfg.Elastic && len(t.Scales(jt)) > 1 {
			hi := min(8, 2*scale)
			jobs[i].Elastic = &Elastic{Min: 1, Max: hi, Online: true}
		}
		if k := cfg.DAGStages; k > 1 {
			j := &jobs[i]
			per := math.Max(1, math.Round(j.Steps/float64(k)))
			for s := 0; s < k; s++ {
				st := Stage{Name: fmt.Sprintf("s%d", s), Type: j.Type, GPUs: j.GPUs, Steps: per}
				switch {
				case s == 0:
				case s == k-1 && k > 2:
					st.After = []string{fmt.Sprintf("s%d", s-2)}
				default:
					st.After = []string{fmt.Sprintf("s%d", s-1)}
				}
				j.Stages = append(j.Stages, st)
			}
			j.Steps = per
		}
	}
	return jobs, nil
}
