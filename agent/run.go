package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/workload"
)

// RunBody is the request of POST /v1/run: a workload, the model files it
// names and a plan, run on the agent's device for a duration.
type RunBody struct {
	// Workload is the workload file's text (YAML).
	Workload string `json:"workload"`
	// Files are the ONNX files the workload names, keyed by the path as
	// written in it (relative, inside the workload's folder); base64 in
	// JSON. Paths starting with "cache:" are the device's own fetched
	// models and are not sent.
	Files map[string][]byte `json:"files"`
	// Plan is the plan file's text; PlanFormat "yaml" (default) or "json".
	Plan       string `json:"plan"`
	PlanFormat string `json:"plan_format,omitempty"`
	// DurationMS is how long requests arrive; Scale multiplies the groups'
	// rates (0: 1); Seed drives arrivals and inputs.
	DurationMS float64 `json:"duration_ms"`
	Scale      float64 `json:"scale,omitempty"`
	Seed       int64   `json:"seed,omitempty"`
}

// RunOptions are a run's parameters besides its files.
type RunOptions struct {
	Duration time.Duration
	Scale    float64
	Seed     int64
}

// Executor runs a plan on the device: the executor side of the agent.
type Executor interface {
	Execute(ctx context.Context, w *workload.Workload, p *plan.Plan, opt RunOptions) (*runtime.Result, error)
}

// LocalExecutor runs plans on this machine with package runtime; its
// predictions come from the analytic model of the platform (or Cost).
type LocalExecutor struct {
	Library  string
	Platform *hw.Platform
	// Cost prices the simulation that predicts the run; nil means
	// cost.NewAnalytic(Platform).
	Cost cost.Estimator
}

var _ Executor = (*LocalExecutor)(nil)

// Execute runs runtime.Run on the executor's platform.
func (e *LocalExecutor) Execute(ctx context.Context, w *workload.Workload, p *plan.Plan, opt RunOptions) (*runtime.Result, error) {
	est := e.Cost
	if est == nil {
		est = cost.NewAnalytic(e.Platform)
	}
	return runtime.Run(ctx, runtime.Config{
		Workload: w, Platform: e.Platform, Plan: p, Cost: est, Library: e.Library,
		Duration: opt.Duration, Scale: opt.Scale, Seed: opt.Seed,
	})
}

// runErr is a run request's error with its status.
type runErr struct {
	status int
	code   string
	msg    string
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, http.MethodPost)
		return
	}
	if s.opt.Executor == nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "agent: run: this agent does not run plans (it was started without an executor)")
		return
	}
	body, ok := s.readBody(w, r, "run")
	if !ok {
		return
	}
	defer s.waiting.Add(-1)
	var rb RunBody
	if err := decodeStrict(body, &rb); err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "agent: run: body is not a run request: "+oneLine(err.Error()))
		return
	}
	dur := time.Duration(rb.DurationMS * float64(time.Millisecond))
	if !(dur > 0) || dur > s.opt.MaxRunDuration {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalid, fmt.Sprintf("agent: run: duration %vms: want more than 0 and at most %v", rb.DurationMS, s.opt.MaxRunDuration))
		return
	}
	dir, err := os.MkdirTemp("", "inlay-agent-run-")
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "agent: run: "+oneLine(err.Error()))
		return
	}
	defer os.RemoveAll(dir)
	wl, p, rerr := unpackRun(dir, rb)
	if rerr != nil {
		writeError(w, rerr.status, rerr.code, "agent: run: "+rerr.msg)
		return
	}
	ctx := r.Context()
	free, taken := s.queueForDevice(ctx, w, "run")
	if !taken {
		return
	}
	defer free()
	res, err := s.opt.Executor.Execute(ctx, wl, p, RunOptions{Duration: dur, Scale: rb.Scale, Seed: rb.Seed})
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeMeasureFailed, "agent: run: "+oneLine(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// unpackRun writes the workload and its files into dir, loads the workload
// and parses the plan.
func unpackRun(dir string, rb RunBody) (*workload.Workload, *plan.Plan, *runErr) {
	invalid := func(format string, args ...any) *runErr {
		return &runErr{http.StatusUnprocessableEntity, CodeInvalid, fmt.Sprintf(format, args...)}
	}
	parsed, err := workload.Parse([]byte(rb.Workload), "workload.yaml")
	if err != nil {
		return nil, nil, invalid("%s", oneLine(err.Error()))
	}
	need := map[string]bool{}
	for _, m := range parsed.Models {
		if m.ONNX != "" && !strings.HasPrefix(m.ONNX, "cache:") {
			need[m.ONNX] = true
		}
	}
	names := slices.Sorted(maps.Keys(rb.Files))
	for _, name := range names {
		if !need[name] {
			return nil, nil, invalid("file %q is not a model the workload names", name)
		}
		if !filepath.IsLocal(name) {
			return nil, nil, invalid("file %q: want a relative path inside the workload's folder", name)
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, nil, &runErr{http.StatusInternalServerError, CodeInternal, oneLine(err.Error())}
		}
		if err := os.WriteFile(path, rb.Files[name], 0o644); err != nil {
			return nil, nil, &runErr{http.StatusInternalServerError, CodeInternal, oneLine(err.Error())}
		}
	}
	var missing []string
	for name := range need {
		if _, ok := rb.Files[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, nil, invalid("the workload names files that were not sent: %s", strings.Join(missing, ", "))
	}
	wpath := filepath.Join(dir, "workload.yaml")
	if err := os.WriteFile(wpath, []byte(rb.Workload), 0o644); err != nil {
		return nil, nil, &runErr{http.StatusInternalServerError, CodeInternal, oneLine(err.Error())}
	}
	wl, err := workload.Load(wpath)
	if err != nil {
		// Paths of this machine's temporary folder mean nothing to the
		// client.
		return nil, nil, invalid("%s", strings.ReplaceAll(oneLine(err.Error()), dir+string(filepath.Separator), ""))
	}
	format := plan.YAML
	if rb.PlanFormat != "" {
		format = plan.Format(rb.PlanFormat)
	}
	p, err := plan.Parse([]byte(rb.Plan), format, "plan")
	if err != nil {
		return nil, nil, invalid("%s", oneLine(err.Error()))
	}
	return wl, p, nil
}

// RunFiles reads a workload file, the model files it names (except the
// device's "cache:" ones) and a plan file into a run request.
func RunFiles(workloadPath, planPath string, opt RunOptions) (RunBody, error) {
	text, err := os.ReadFile(workloadPath)
	if err != nil {
		return RunBody{}, fmt.Errorf("agent: run: %w", err)
	}
	parsed, err := workload.Parse(text, workloadPath)
	if err != nil {
		return RunBody{}, err
	}
	rb := RunBody{Workload: string(text), Files: map[string][]byte{}, DurationMS: float64(opt.Duration) / float64(time.Millisecond), Scale: opt.Scale, Seed: opt.Seed}
	for _, m := range parsed.Models {
		if m.ONNX == "" || strings.HasPrefix(m.ONNX, "cache:") {
			continue
		}
		if !filepath.IsLocal(m.ONNX) {
			return RunBody{}, fmt.Errorf("agent: run: model %s: %q is not inside the workload's folder; an agent only receives files under it", m.Name, m.ONNX)
		}
		data, err := os.ReadFile(filepath.Join(filepath.Dir(workloadPath), filepath.FromSlash(m.ONNX)))
		if err != nil {
			return RunBody{}, fmt.Errorf("agent: run: model %s: %w", m.Name, err)
		}
		rb.Files[m.ONNX] = data
	}
	pt, err := os.ReadFile(planPath)
	if err != nil {
		return RunBody{}, fmt.Errorf("agent: run: %w", err)
	}
	format, err := plan.FormatOf(planPath)
	if err != nil {
		return RunBody{}, err
	}
	rb.Plan, rb.PlanFormat = string(pt), string(format)
	return rb, nil
}

// Run runs a plan on the agent's device and returns what it measured, the
// simulator's predictions on the agent included.
func (c *Client) Run(ctx context.Context, rb RunBody) (*runtime.Result, error) {
	body, err := json.Marshal(rb)
	if err != nil {
		return nil, fmt.Errorf("agent: run: encode request: %w", err)
	}
	var res runtime.Result
	if err := c.do(ctx, "run", http.MethodPost, "/v1/run", body, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
