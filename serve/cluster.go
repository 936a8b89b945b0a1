package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	asmodel "github.com/inlay-dev/inlay/cluster/planned"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	csim "github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/internal/named"
)

// ClusterInfo is what GET /api/cluster answers: the cluster presets and
// the policies (inlay cluster platforms, inlay cluster policies).
type ClusterInfo struct {
	Clusters []Named `json:"clusters"`
	Policies []Named `json:"policies"`
}

// Named is a name with one line about it.
type Named struct {
	Name  string `json:"name"`
	About string `json:"about"`
}

func (s *Server) clusterInfo(w http.ResponseWriter, r *http.Request) {
	info := ClusterInfo{Clusters: []Named{}, Policies: []Named{}}
	for _, n := range chw.Presets() {
		c, err := chw.Preset(n)
		if err != nil {
			fail(w, err)
			return
		}
		info.Clusters = append(info.Clusters, Named{n, c.Summary()})
	}
	reg := registry.Registry()
	for _, n := range registry.Names() {
		info.Policies = append(info.Policies, Named{n, reg[n].Summary})
	}
	writeJSON(w, http.StatusOK, info)
}

// ClusterRequest asks for inlay cluster simulate: a trace (given, or drawn
// as inlay cluster generate does) on a cluster preset under a policy.
type ClusterRequest struct {
	Cluster string `json:"cluster,omitempty"` // preset; default gavel-108
	Policy  string `json:"policy,omitempty"`  // default gavel
	// Trace is a trace file's text (JSONL, YAML or Gavel's lines), named
	// TraceName in errors; without it, Generate draws one.
	Trace     string       `json:"trace,omitempty"`
	TraceName string       `json:"trace_name,omitempty"`
	Generate  *GenerateReq `json:"generate,omitempty"`
	Seed      uint64       `json:"seed,omitempty"`
	// Window is the FIRST, LAST job IDs measured (default: all).
	Window *[2]int `json:"window,omitempty"`
}

// GenerateReq draws a trace with Gavel's distributions.
type GenerateReq struct {
	Jobs     int     `json:"jobs"`
	RateHz   float64 `json:"rate_per_hour"`
	Seed     uint64  `json:"seed,omitempty"`
	MultiGPU bool    `json:"multi_gpu,omitempty"`
}

// maxClusterJobs bounds a web request's trace.
const maxClusterJobs = 2000

func (q *ClusterRequest) check() error {
	if q.Cluster == "" {
		q.Cluster = "gavel-108"
	}
	if q.Policy == "" {
		q.Policy = "gavel"
	}
	if _, err := named.Lookup(registry.Kind, registry.Registry(), q.Policy, q.Policy); err != nil {
		return err
	}
	if q.TraceName == "" {
		q.TraceName = "trace.jsonl"
	}
	if !plainName.MatchString(q.TraceName) || strings.Contains(q.TraceName, "..") {
		return fmt.Errorf("serve: trace_name %q: want a plain file name", q.TraceName)
	}
	if q.Trace == "" && q.Generate == nil {
		q.Generate = &GenerateReq{Jobs: 200, RateHz: 6}
	}
	if g := q.Generate; q.Trace == "" && (g.Jobs < 1 || g.Jobs > maxClusterJobs) {
		return fmt.Errorf("serve: cluster: generate.jobs %d: want 1 to %d on this server", g.Jobs, maxClusterJobs)
	}
	if q.Window != nil && (q.Window[0] < 0 || q.Window[1] < q.Window[0]) {
		return fmt.Errorf("serve: cluster: window %v: want FIRST ≤ LAST job IDs", *q.Window)
	}
	return nil
}

// clusterSimulate runs inlay cluster simulate; with Accept:
// text/event-stream it streams "progress" ({done, total}) and then
// "result" or "error".
func (s *Server) clusterSimulate(w http.ResponseWriter, r *http.Request) {
	req, ok := request[ClusterRequest](w, r)
	if !ok {
		return
	}
	t, err := throughput.Gavel()
	if err != nil {
		fail(w, err)
		return
	}
	c, err := chw.Preset(req.Cluster)
	if err != nil {
		fail(w, badf("cluster: %q is not a cluster preset (%s)", req.Cluster, strings.Join(chw.Presets(), ", ")))
		return
	}
	var jobs []job.Job
	if req.Trace != "" {
		jobs, err = job.Parse(req.TraceName, []byte(req.Trace), job.Detect(req.TraceName, []byte(req.Trace)))
		if err == nil && len(jobs) > maxClusterJobs {
			err = fmt.Errorf("cluster: %s: %d jobs, over this server's %d", req.TraceName, len(jobs), maxClusterJobs)
		}
	} else {
		g := req.Generate
		jobs, err = job.Generate(job.GenConfig{Jobs: g.Jobs, Rate: g.RateHz, Seed: g.Seed, MultiGPU: g.MultiGPU}, t)
	}
	if err == nil {
		err = asmodel.Fill(req.TraceName, t, c, jobs)
	}
	if err == nil {
		err = job.Validate(req.TraceName, jobs, t, c)
	}
	if err != nil {
		fail(w, bad(err))
		return
	}
	pol, err := registry.New(req.Policy, registry.Options{Seed: req.Seed})
	if err != nil {
		fail(w, bad(err))
		return
	}
	cfg := csim.Config{Sched: sched.Config{Round: 360, ResetInterval: 1920, Placement: sched.Consolidated, Seed: req.Seed}, Timeline: true}
	if req.Window != nil {
		if req.Window[1] >= len(jobs) {
			fail(w, badf("serve: cluster: window %v: the trace has jobs 0:%d", *req.Window, len(jobs)-1))
			return
		}
		cfg.Window, cfg.StopAtWindow = *req.Window, true
	}
	st, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer s.release()
	cfg.Progress = func(done, total int) { st.send("progress", map[string]int{"done": done, "total": total}) }
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.MaxBudget)
	defer cancel()
	start := time.Now()
	res, err := csim.Run(ctx, cfg, jobs, c, t, pol)
	if r.Context().Err() != nil {
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = bad(fmt.Errorf("serve: cluster: the simulation ran past this server's limit of %v (inlay serve --max-budget); try fewer jobs", s.cfg.MaxBudget))
	}
	if err != nil {
		s.answer(w, st, nil, err)
		return
	}
	o := csim.NewOutcome(res, time.Since(start))
	o.AddTimeline(res)
	s.answer(w, st, o, nil)
}
