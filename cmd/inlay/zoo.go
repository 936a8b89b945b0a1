package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/report/view"
)

func newZooCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "zoo",
		Short: "List and export the built-in reference networks",
		Long: "The zoo holds reference networks built layer by layer in Go with their\n" +
			"published architectures (no download). Weights are random when exported.\n" +
			"Workloads (input: [1, 3, H, W]) and inspect (--input) take other input sizes.",
	}
	cmd.AddCommand(newZooListCmd(), newZooExportCmd())
	return cmd
}

func newZooListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the zoo networks with their input shape, layers, parameters and MACs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows, err := app.Zoo()
			if err != nil {
				return err
			}
			return view.Zoo(cmd.OutOrStdout(), rows)
		},
	}
}

func newZooExportCmd() *cobra.Command {
	var out string
	var seed int64
	cmd := &cobra.Command{
		Use:   "export NAME -o FILE",
		Short: "Write a zoo network as an ONNX file with seeded random weights",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("zoo export: -o FILE is required")
			}
			name, size, err := app.ExportZoo(args[0], out, seed)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s, %d bytes, seed %d\n", out, name, size, seed)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "ONNX file to write")
	cmd.Flags().Int64Var(&seed, "seed", 0, "seed of the random weights")
	return cmd
}
