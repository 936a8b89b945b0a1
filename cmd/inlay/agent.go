package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/agent"
	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/workload"
)

// agentTokenEnv names the environment variable that may hold the agent's
// token instead of --token (which other users of the machine can read in
// the process list).
const agentTokenEnv = "INLAY_AGENT_TOKEN"

type agentFlags struct {
	listen, token, ortLib, platform string
	maxUpload                       byteSize
	quiet, noRun                    bool
}

func newAgentCmd() *cobra.Command {
	f := agentFlags{maxUpload: agent.DefaultMaxUpload}
	cmd := &cobra.Command{
		Use:   "agent --listen ADDR --token T",
		Short: "Serve this device's profiler over HTTP, for inlay profile --agent on the host",
		Long: `agent puts this device in the loop of a host's planner: it serves the same
profiler as inlay profile (ONNX Runtime's CPU build, each measurement pinned to
its processor's cores) over HTTP. The host runs

    inlay profile WORKLOAD --agent http://THIS-DEVICE:PORT --token T

GET /v1/info advertises the device's processors and backends; POST
/v1/measure takes one ONNX subgraph (JSON, the model base64-encoded, at most
--max-upload bytes) with its input shapes and answers its timings; POST
/v1/handoff measures the runtime's hand-off between dependent subgraphs on
this device (what inlay profile --handoff stores); POST /v1/run (unless --no-run) runs a plan on this device, sent by

    inlay agent run WORKLOAD --plan plan.yaml --url http://THIS-DEVICE:PORT --token T

Every request needs "Authorization: Bearer T"; measurements, probes and runs
take the device one at a time.
Ctrl-C or SIGTERM stops the agent gracefully. The token may also come from
$` + agentTokenEnv + `. It travels in the clear over HTTP: serve on a trusted
network, or keep the default loopback address and reach it through an SSH
tunnel (ssh -L 7878:127.0.0.1:7878 DEVICE) or adb forward tcp:7878 tcp:7878.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runAgent(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), &f, nil)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7878", "address to listen on (HOST:PORT; 0.0.0.0:PORT for every interface)")
	fl.StringVar(&f.token, "token", "", "token clients must present (default $"+agentTokenEnv+")")
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
	token := f.token
	if token == "" {
		token = os.Getenv(agentTokenEnv)
	}
	if token == "" {
		return fmt.Errorf("agent: no token: pass --token T or set $%s (the agent never serves without one)", agentTokenEnv)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return fmt.Errorf("agent: the token must not contain white space")
	}
	pl, err := hw.Resolve(f.platform)
	if err != nil {
		return err
	}
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
	dev, err := profile.NewLocal(f.ortLib, pl)
	if errors.Is(err, ort.ErrNoCgo) {
		return fmt.Errorf("agent: %w", err)
	}
	if err != nil {
		return fmt.Errorf("agent: %w (pass --ort-lib PATH to the ONNX Runtime shared library)", err)
	}
	info, err := dev.Info(ctx)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	opt := agent.Options{MaxUpload: int64(f.maxUpload), Prober: &agent.LocalProber{Library: f.ortLib, Platform: pl}}
	if !f.noRun {
		opt.Executor = &agent.LocalExecutor{Library: f.ortLib, Platform: pl}
	}
	if !f.quiet {
		opt.Logf = log.New(errOut, "", log.LstdFlags).Printf
	}
	fmt.Fprintf(out, "inlay agent %s: device %s, ONNX Runtime %s, platform %s (%s)\n",
		agent.Version, info.Name, info.ORTVersion, pl.Name, strings.Join(pl.Names(), ", "))
	fmt.Fprintf(out, "listening on http://%s (uploads up to %s); Ctrl-C stops\n", ln.Addr(), f.maxUpload.String())
	if ready != nil {
		ready(ln.Addr().String())
	}
	if err := agent.Serve(ctx, ln, agent.NewServer(dev, token, opt), agent.ServeOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(out, "agent stopped")
	return nil
}

// byteSize is a size flag: a number of bytes with an optional unit (B, KB,
// MB, GB in powers of 1000; KiB, MiB, GiB in powers of 1024; K, M, G are
// taken as the binary units).
type byteSize int64

var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30},
	{"B", 1},
}

func parseByteSize(s string) (byteSize, error) {
	t := strings.TrimSpace(s)
	factor := int64(1)
	for _, u := range sizeUnits {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, factor = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/factor {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, e.g. 64MiB", s)
	}
	return byteSize(n * factor), nil
}

func (b *byteSize) Set(s string) error {
	v, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

func (b *byteSize) Type() string { return "size" }

// String writes the size in the largest binary unit that divides it.
func (b *byteSize) String() string {
	v := int64(*b)
	for _, u := range []struct {
		suffix string
		factor int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.factor && v%u.factor == 0 {
			return fmt.Sprintf("%d%s", v/u.factor, u.suffix)
		}
	}
	return strconv.FormatInt(v, 10)
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
		Long: `agent run sends the workload, the ONNX files it names (those under its folder;
"cache:" models are the device's own) and the plan to the inlay agent at
--url, which runs the plan on its processors with ONNX Runtime for
--duration, as inlay run does here, and answers per group the requests,
completed, late and dropped ones, the p50 and p99 latencies and the
simulator's predictions for the same plan and rate: made here, on the
agent's platform with the cost model of --profiles (what inlay profile
--agent measured on that device first, then the calibrated model), else
the agent's own (its platform's analytic model).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runAgentRun(ctx, cmd, args[0], &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "the agent's URL (http://HOST:PORT)")
	fl.StringVar(&f.token, "token", "", "the agent's token (default $"+agentTokenEnv+")")
	fl.StringVar(&f.plan, "plan", "", "plan file (from inlay plan)")
	fl.DurationVar(&f.duration, "duration", 20*time.Second, "how long requests arrive")
	fl.Float64Var(&f.scale, "scale", 1, "multiplier of every group's rate")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the arrivals and the inputs")
	fl.BoolVar(&f.json, "json", false, `print {"groups": [...]} as JSON`)
	addProfilesFlag(cmd)
	return cmd
}

// predictOnHost replaces the result's predicted latencies with the
// simulator's on this machine (runtime.Predict): the agent's platform, the
// workload loaded here, the cost model of --profiles and the arrival lag
// recorded there for the agent's device, at the run's scale and seed. It
// returns the agent's platform and the cost model's note.
func predictOnHost(ctx context.Context, cmd *cobra.Command, c *agent.Client, workloadPath string, f *agentRunFlags, res *runtime.Result) (*hw.Platform, string, error) {
	info, err := c.Info(ctx)
	if err != nil {
		return nil, "", err
	}
	w, err := workload.Load(workloadPath)
	if err != nil {
		return info.Platform, "", err
	}
	p, err := plan.Load(f.plan)
	if err != nil {
		return info.Platform, "", err
	}
	est, note, err := costModel(cmd, info.Platform, w)
	if err != nil {
		return info.Platform, "", err
	}
	rec, err := profile.ReadRecorded(profilesPath(cmd), info.Name)
	if err != nil {
		return info.Platform, "", err
	}
	cfg := runtime.Config{Workload: w, Platform: info.Platform, Plan: p, Cost: est, Scale: f.scale, Seed: f.seed, ArrivalLag: rec.ArrivalLag}
	if err := runtime.Predict(cfg, res); err != nil {
		return info.Platform, "", err
	}
	return info.Platform, note(), nil
}

func runAgentRun(ctx context.Context, cmd *cobra.Command, workloadPath string, f *agentRunFlags) error {
	out := cmd.OutOrStdout()
	if f.url == "" || f.plan == "" {
		return fmt.Errorf("agent run: give --url URL and --plan FILE")
	}
	token := f.token
	if token == "" {
		token = os.Getenv(agentTokenEnv)
	}
	rb, err := agent.RunFiles(workloadPath, f.plan, agent.RunOptions{Duration: f.duration, Scale: f.scale, Seed: f.seed})
	if err != nil {
		return err
	}
	c := agent.NewClient(f.url, token)
	res, err := c.Run(ctx, rb)
	if err != nil {
		return err
	}
	// The agent predicted with its platform's analytic model; predict here
	// too, with this machine's profile store (which holds what inlay
	// profile --agent measured on that device), and prefer that.
	predictedBy := "the agent's analytic model"
	pl, note, err := predictOnHost(ctx, cmd, c, workloadPath, f, res)
	if err != nil {
		predictedBy += fmt.Sprintf(" (predicting here failed: %v)", err)
	} else {
		predictedBy = "this machine's cost model"
		if note != "" {
			predictedBy += "; " + note
		}
	}
	j := app.RunResultOf(workloadPath, pl, "", res)
	j.Agent, j.CostModel = f.url, predictedBy
	if p, err := plan.Load(f.plan); err == nil {
		j.Planner = p.Planner
	}
	if f.json {
		return printJSON(out, j)
	}
	fmt.Fprintf(out, "ran %s on the agent at %s for %v (scale %g)\n", f.plan, f.url, res.Duration, res.Scale)
	if res.Interrupted {
		fmt.Fprintln(out, "interrupted")
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	fmt.Fprintf(out, "predictions: %s\n", predictedBy)
	t := &textfmt.Table{Header: []string{"GROUP", "REQUESTS", "COMPLETED", "LATE", "DROPPED", "P50", "PREDICTED P50", "P99", "PREDICTED P99"}}
	for _, g := range j.Groups {
		t.Add(g.Name, strconv.Itoa(g.Requests), strconv.Itoa(g.Completed), strconv.Itoa(g.Late), strconv.Itoa(g.Dropped),
			fmt.Sprintf("%.2fms", g.P50Ms), fmt.Sprintf("%.2fms", g.PredictedP50Ms), fmt.Sprintf("%.2fms", g.P99Ms), fmt.Sprintf("%.2fms", g.PredictedP99Ms))
	}
	if _, err := t.WriteTo(out); err != nil {
		return err
	}
	for _, g := range j.Groups {
		for _, d := range g.Drops {
			fmt.Fprintf(out, "%s: %d dropped (%s), first: %s\n", g.Name, d.Count, d.Reason, d.Example)
		}
	}
	return nil
}
