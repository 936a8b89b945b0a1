package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/inlay-dev/inlay/agent"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/workload"
)

// AgentTokenEnv names the environment variable that may hold the agent's
// token instead of --token (which other users of the machine can read in
// the process list).
const AgentTokenEnv = "INLAY_AGENT_TOKEN"

// AgentConfig is an inlay agent's: the address it listens on, its token,
// the ONNX Runtime library and the platform of this device, the largest
// upload, whether it refuses runs, and where it logs requests (nil: not).
type AgentConfig struct {
	Listen, Token, Library, Platform string
	MaxUpload                        int64
	NoRun                            bool
	Logf                             func(format string, args ...any)
}

// Agent is an inlay agent listening, not yet serving.
type Agent struct {
	Listener net.Listener
	Platform *hw.Platform
	Info     profile.DeviceInfo
	server   *agent.Server
}

// NewAgent checks the token and that every processor of the platform is
// a set of cores this process may run on, opens the device and listens.
func NewAgent(ctx context.Context, cfg AgentConfig) (*Agent, error) {
	if cfg.Token == "" {
		return nil, fmt.Errorf("agent: no token: pass --token T or set $%s (the agent never serves without one)", AgentTokenEnv)
	}
	if strings.ContainsAny(cfg.Token, " \t\r\n") {
		return nil, fmt.Errorf("agent: the token must not contain white space")
	}
	pl, err := hw.Resolve(cfg.Platform)
	if err != nil {
		return nil, err
	}
	if err := checkHostCores(pl); err != nil {
		return nil, err
	}
	dev, err := profile.NewLocal(cfg.Library, pl)
	if errors.Is(err, ort.ErrNoCgo) {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("agent: %w (pass --ort-lib PATH to the ONNX Runtime shared library)", err)
	}
	info, err := dev.Info(ctx)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	opt := agent.Options{MaxUpload: cfg.MaxUpload, Prober: &agent.LocalProber{Library: cfg.Library, Platform: pl}, Logf: cfg.Logf}
	if !cfg.NoRun {
		opt.Executor = &agent.LocalExecutor{Library: cfg.Library, Platform: pl}
	}
	return &Agent{Listener: ln, Platform: pl, Info: info, server: agent.NewServer(dev, cfg.Token, opt)}, nil
}

// checkHostCores fails unless every processor of pl lists cores this
// process may run on.
func checkHostCores(pl *hw.Platform) error {
	here := map[int]bool{}
	for _, c := range hw.HostCores() {
		here[c] = true
	}
	for _, pr := range pl.Processors {
		if len(pr.Cores) == 0 {
			return fmt.Errorf("agent: platform %s: processor %s lists no cores of this machine; the agent measures on CPU cores with ONNX Runtime (use --platform host, or a file whose processors list cores)", pl.Name, pr.Name)
		}
		for _, c := range pr.Cores {
			if !here[c] {
				return fmt.Errorf("agent: platform %s: processor %s: core %d is not one this process may run on (it may use %v)", pl.Name, pr.Name, c, hw.HostCores())
			}
		}
	}
	return nil
}

// Serve serves until ctx ends.
func (a *Agent) Serve(ctx context.Context) error {
	return agent.Serve(ctx, a.Listener, a.server, agent.ServeOptions{})
}

// AgentRunInput asks an agent to run a plan: the workload and plan files,
// the agent's URL and token, the run's options, and the profile store
// (and whether it was named) this machine predicts with.
type AgentRunInput struct {
	Workload, Plan, URL, Token string
	Options                    agent.RunOptions
	Profiles                   string
	ProfilesNamed              bool
}

// AgentRun is what an agent's run measured (Runtime), as a run result
// (Result), with PredictedBy naming the predictions' cost model.
type AgentRun struct {
	Runtime     *runtime.Result
	Result      *RunResult
	PredictedBy string
}

// RunOnAgent sends the workload, its ONNX files and the plan to the agent,
// which runs it, and predicts the latencies here too with this machine's
// profile store (which holds what inlay profile --agent measured on that
// device), preferring that to the agent's analytic model.
func RunOnAgent(ctx context.Context, in AgentRunInput) (*AgentRun, error) {
	rb, err := agent.RunFiles(in.Workload, in.Plan, in.Options)
	if err != nil {
		return nil, err
	}
	c := agent.NewClient(in.URL, in.Token)
	res, err := c.Run(ctx, rb)
	if err != nil {
		return nil, err
	}
	predictedBy := "the agent's analytic model"
	pl, note, err := predictOnHost(ctx, c, in, res)
	if err != nil {
		predictedBy += fmt.Sprintf(" (predicting here failed: %v)", err)
	} else {
		predictedBy = "this machine's cost model"
		if note != "" {
			predictedBy += "; " + note
		}
	}
	j := RunResultOf(in.Workload, pl, "", res)
	j.Agent, j.CostModel = in.URL, predictedBy
	if p, err := plan.Load(in.Plan); err == nil {
		j.Planner = p.Planner
	}
	return &AgentRun{Runtime: res, Result: j, PredictedBy: predictedBy}, nil
}

// predictOnHost replaces the result's predicted latencies with the
// simulator's on this machine (runtime.Predict): the agent's platform, the
// workload loaded here, the cost model of the profile store and the
// arrival lag recorded there for the agent's device, at the run's scale
// and seed. It returns the agent's platform and the cost model's note.
func predictOnHost(ctx context.Context, c *agent.Client, in AgentRunInput, res *runtime.Result) (*hw.Platform, string, error) {
	info, err := c.Info(ctx)
	if err != nil {
		return nil, "", err
	}
	w, err := workload.Load(in.Workload)
	if err != nil {
		return info.Platform, "", err
	}
	p, err := plan.Load(in.Plan)
	if err != nil {
		return info.Platform, "", err
	}
	est, note, err := profile.CostModel(in.Profiles, in.ProfilesNamed, info.Platform, w)
	if err != nil {
		return info.Platform, "", err
	}
	rec, err := profile.ReadRecorded(in.Profiles, info.Name)
	if err != nil {
		return info.Platform, "", err
	}
	cfg := runtime.Config{Workload: w, Platform: info.Platform, Plan: p, Cost: est, Scale: in.Options.Scale, Seed: in.Options.Seed, ArrivalLag: rec.ArrivalLag}
	if err := runtime.Predict(cfg, res); err != nil {
		return info.Platform, "", err
	}
	return info.Platform, note(), nil
}
