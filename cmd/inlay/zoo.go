package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/zoo"
)

func newZooCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "zoo",
		Short: "List and export the built-in reference networks",
		Long: "The zoo holds nine reference networks built layer by layer in Go with their\n" +
			"published architectures (no download). Weights are random when exported.",
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
			return zooList(cmd.OutOrStdout())
		},
	}
}

// zooList prints one aligned row per network. (A text/tabwriter table: the
// shared table formatter did not exist when this command was written.)
func zooList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tINPUT\tLAYERS\tPARAMS\tMACS\tDESCRIPTION")
	for _, s := range zoo.Specs() {
		m, err := zoo.Build(s.Name)
		if err != nil {
			return err
		}
		lg, err := graph.BuildLayers(m)
		if err != nil {
			return fmt.Errorf("zoo: %s: %w", s.Name, err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", s.Name, s.Input, len(lg.Layers),
			siCount(zoo.TrainableParams(m)), siCount(m.Totals().MACs), s.Description)
	}
	return tw.Flush()
}

// siCount writes a count with a k/M/G suffix and three significant digits.
func siCount(n int64) string {
	f := float64(n)
	switch {
	case f >= 1e9:
		return fmt.Sprintf("%.3gG", f/1e9)
	case f >= 1e6:
		return fmt.Sprintf("%.3gM", f/1e6)
	case f >= 1e3:
		return fmt.Sprintf("%.3gk", f/1e3)
	}
	return fmt.Sprintf("%d", n)
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
			m, err := zoo.Build(args[0])
			if err != nil {
				return err
			}
			data, err := onnx.Encode(m, seed)
			if err != nil {
				return fmt.Errorf("zoo export: %s: %w", args[0], err)
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return fmt.Errorf("zoo export: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s, %d bytes, seed %d\n", out, m.Name, len(data), seed)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "ONNX file to write")
	cmd.Flags().Int64Var(&seed, "seed", 0, "seed of the random weights")
	return cmd
}
