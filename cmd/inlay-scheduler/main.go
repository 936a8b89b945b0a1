// Command inlay-scheduler is inlay's scheduler for deep-learning training
// Jobs on Kubernetes, as a binary of its own (the inlay CLI builds without
// client-go): run serves a cluster; up and down start and stop a local
// control plane of KWOK nodes; replay plays a job trace on it; bench
// measures the scheduler at scale beside kube-scheduler; manifests prints
// what a cluster needs to run it.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "inlay-scheduler:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "inlay-scheduler",
		Short:         "inlay's Kubernetes scheduler for training Jobs on heterogeneous GPU clusters",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCmd(), newManifestsCmd(), newUpCmd(), newDownCmd(), newReplayCmd(), newBenchCmd())
	return root
}
