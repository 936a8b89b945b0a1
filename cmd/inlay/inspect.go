package main

import (
	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/graph"
)

func newInspectCmd() *cobra.Command {
	var inputs []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect MODEL",
		Short: "Show a model's inputs, outputs, operators, work and largest tensors",
		Long: "MODEL is an ONNX file, cache:FILE.onnx (a fetched real model, as in\n" +
			"workloads) or the name of a zoo network (see inlay zoo list).\n" +
			"Symbolic input dimensions of ONNX files default to 1 where they are the\n" +
			"batch; the others stay symbolic (shapes such as 1xNx512, work per symbol\n" +
			"where it is linear in it) unless --input name=d0,d1,... fixes them\n" +
			"(repeatable; a name or ? in place of a size keeps that dimension open).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := app.Inspect(args[0], inputs)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), s)
			}
			return s.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "shape of a graph input, name=d0,d1,... (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object with exact integers")
	return cmd
}

// loadModel opens an ONNX file, or builds a zoo network (app.LoadModel).
func loadModel(arg string, inputFlags []string) (*graph.Model, error) {
	return app.LoadModel(arg, inputFlags)
}
