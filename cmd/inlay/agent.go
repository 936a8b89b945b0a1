package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/agent"
	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/report/view"
)

type agentFlags struct {
	listen, token, ortLib, platform string
	maxUpload                       textfmt.ByteSize
	quiet, noRun                    bool
}

func newAgentCmd() *cobra.Command {
	f := agentFlags{maxUpload: agent.DefaultMaxUpload}
	cmd := &cobra.Command{
		Use:   "agent --listen ADDR --token T",
		Short: "Serve this device's profiler over HTTP, for inlay profile --agent on the host",
		Long:  help("agent"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible(cmd, syscall.SIGTERM)
			defer stop()
			return runAgent(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), &f, nil)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7878", "address to listen on (HOST:PORT; 0.0.0.0:PORT for every interface)")
	fl.StringVar(&f.token, "token", "", "token clients must present (default $"+app.AgentTokenEnv+")")
	fl.StringVar(&f.ortLib, "ort-lib", assets.ORTLibrary(), "ONNX Runtime shared library")
	fl.StringVar(&f.platform, "platform", "host", "platform preset or file describing this device (its processors must list cores)")
	fl.Var(&f.maxUpload, "max-upload", "largest measure request accepted (e.g. 64MiB, 512KiB, 1000000)")
	fl.BoolVar(&f.quiet, "quiet", false, "do not log each request to stderr")
	fl.BoolVar(&f.noRun, "no-run", false, "only measure: refuse to run plans (POST /v1/run)")
	cmd.AddCommand(newAgentRunCmd())
	return cmd
}

// runAgent serves until ctx ends. ready, when not nil, receives the
// address the agent listens on once it accepts connections.
func runAgent(ctx context.Context, out, errOut io.Writer, f *agentFlags, ready func(addr string)) error {
	cfg := app.AgentConfig{Listen: f.listen, Token: agentToken(f.token), Library: f.ortLib, Platform: f.platform,
		MaxUpload: int64(f.maxUpload), NoRun: f.noRun}
	if !f.quiet {
		cfg.Logf = log.New(errOut, "", log.LstdFlags).Printf
	}
	a, err := app.NewAgent(ctx, cfg)
	if err != nil {
		return err
	}
	pl := a.Platform
	fmt.Fprintf(out, "inlay agent %s: device %s, ONNX Runtime %s, platform %s (%s)\n",
		agent.Version, a.Info.Name, a.Info.ORTVersion, pl.Name, strings.Join(pl.Names(), ", "))
	fmt.Fprintf(out, "listening on http://%s (uploads up to %s); Ctrl-C stops\n", a.Listener.Addr(), f.maxUpload.String())
	if ready != nil {
		ready(a.Listener.Addr().String())
	}
	if err := a.Serve(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "agent stopped")
	return nil
}

// agentToken is the token flag's value, else $INLAY_AGENT_TOKEN.
func agentToken(flag string) string {
	if flag == "" {
		return os.Getenv(app.AgentTokenEnv)
	}
	return flag
}

type agentRunFlags struct {
	url, token, plan string
	duration         time.Duration
	scale            float64
	seed             int64
	json             bool
}

func newAgentRunCmd() *cobra.Command {
	var f agentRunFlags
	cmd := &cobra.Command{
		Use:   "run WORKLOAD --plan plan.yaml --url URL --token T",
		Short: "Run a plan on the device of an inlay agent and print what it measured",
		Long:  help("agent-run"),
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := interruptible(cmd, syscall.SIGTERM)
			defer stop()
			return runAgentRun(ctx, cmd, args[0], &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "the agent's URL (http://HOST:PORT)")
	fl.StringVar(&f.token, "token", "", "the agent's token (default $"+app.AgentTokenEnv+")")
	fl.StringVar(&f.plan, "plan", "", "plan file (from inlay plan)")
	fl.DurationVar(&f.duration, "duration", 20*time.Second, "how long requests arrive")
	fl.Float64Var(&f.scale, "scale", 1, "multiplier of every group's rate")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the arrivals and the inputs")
	fl.BoolVar(&f.json, "json", false, "print one JSON object (inlay run --json's) instead of tables")
	addProfilesFlag(cmd)
	return cmd
}

func runAgentRun(ctx context.Context, cmd *cobra.Command, workloadPath string, f *agentRunFlags) error {
	if f.url == "" || f.plan == "" {
		return fmt.Errorf("agent run: give --url URL and --plan FILE")
	}
	prof, named := profilesFlag(cmd)
	r, err := app.RunOnAgent(ctx, app.AgentRunInput{Workload: workloadPath, Plan: f.plan, URL: f.url, Token: agentToken(f.token),
		Options: agent.RunOptions{Duration: f.duration, Scale: f.scale, Seed: f.seed}, Profiles: prof, ProfilesNamed: named})
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(cmd.OutOrStdout(), r.Result)
	}
	return view.AgentRun(cmd.OutOrStdout(), f.plan, f.url, r.PredictedBy, r.Runtime, r.Result)
}
