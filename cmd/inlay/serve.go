package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/serve"
)

type serveFlags struct {
	listen, token, examples string
	maxBody                 int64
	maxSearches, workers    int
	maxBudget               time.Duration
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--listen 127.0.0.1:8080]",
		Short: "Serve a local web UI: edit workloads, watch searches, look at and question plans",
		Long:  help("serve"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runServe(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on (host:port); not loopback only with --token")
	fl.StringVar(&f.token, "token", "", "bearer token every request must carry (required off loopback)")
	fl.StringVar(&f.examples, "examples", "examples", "folder of example workloads; workloads from the browser read files only there")
	fl.Int64Var(&f.maxBody, "max-body", serve.DefaultMaxBody, "largest request body in bytes (uploads included)")
	fl.IntVar(&f.maxSearches, "max-searches", serve.DefaultMaxSearches, "searches (plan, bench) running at once; more get 429")
	fl.DurationVar(&f.maxBudget, "max-budget", serve.DefaultMaxBudget, "largest wall-clock budget of one search")
	fl.IntVar(&f.workers, "workers", 0, "evaluations a search runs at once (0: one per core)")
	addProfilesFlag(cmd)
	return cmd
}

func runServe(cmd *cobra.Command, f *serveFlags) error {
	if err := serve.CheckListen(f.listen, f.token); err != nil {
		return err
	}
	examples := f.examples
	if st, err := os.Stat(examples); err != nil || !st.IsDir() {
		if cmd.Flags().Changed("examples") {
			return fmt.Errorf("serve: --examples %s: not a folder", examples)
		}
		examples = ""
	}
	ctx, stop := interruptible(cmd)
	defer stop()
	prof, named := profilesFlag(cmd)
	cfg := serve.Config{Token: f.token, Examples: examples, MaxBody: f.maxBody,
		MaxSearches: f.maxSearches, MaxBudget: f.maxBudget, Workers: f.workers,
		Profiles: prof, ProfilesNamed: named}
	return serve.Run(ctx, f.listen, cfg, func(url string) {
		fmt.Fprintf(cmd.OutOrStdout(), "inlay serve: %s (Ctrl-C stops)\n", url)
	})
}
