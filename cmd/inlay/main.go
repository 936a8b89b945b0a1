// Command inlay fits many deep-learning models onto the unlike processors of
// one device: it cuts each model into subgraphs, places and orders them,
// predicts what the plan sustains and runs it on ONNX Runtime.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

func main() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "inlay:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "inlay",
		Short:         "Fit many DNN models onto the heterogeneous processors of a device",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Every subcommand, in the order `inlay --help` lists them.
	root.AddCommand(
		newDemoCmd(),
		newInspectCmd(), newQuantizeCmd(),
		newZooCmd(),
		newPlatformsCmd(),
		newSimulateCmd(),
		newPlanCmd(),
		newBenchCmd(),
		newProfileCmd(), newCalibrateCmd(),
		newRunCmd(),
		newAgentCmd(),
		newClusterCmd(),
		newTrainCmd(),
		newServeCmd(),
	)
	return root
}

// interruptible is cmd's context, cancelled on an interrupt or one of
// the other signals given.
func interruptible(cmd *cobra.Command, also ...os.Signal) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), append([]os.Signal{os.Interrupt}, also...)...)
}
