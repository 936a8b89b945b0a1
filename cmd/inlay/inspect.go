package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/inspect"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
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
			if rest, ok := strings.CutPrefix(args[0], workload.CachePrefix); ok {
				args[0] = assets.ModelPath(rest)
			}
			if sym, err := loadSymbolic(args[0], inputs); err != nil {
				return err
			} else if sym != nil {
				s := inspect.SummarizeSymbolic(sym)
				if asJSON {
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					return enc.Encode(s)
				}
				return s.WriteText(cmd.OutOrStdout())
			}
			m, err := loadModel(args[0], inputs)
			if err != nil {
				return err
			}
			s, err := inspect.Summarize(m)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			return s.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "shape of a graph input, name=d0,d1,... (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object with exact integers")
	return cmd
}

// parseInputFlags reads --input name=d0,d1,... values.
func parseInputFlags(flags []string) (map[string]graph.Shape, error) {
	out := map[string]graph.Shape{}
	for _, f := range flags {
		i := strings.LastIndex(f, "=")
		if i <= 0 {
			return nil, fmt.Errorf("--input %q: want name=d0,d1,... (e.g. x=1,3,640,640)", f)
		}
		name := f[:i]
		s, err := graph.ParseShape(f[i+1:])
		if err != nil {
			return nil, fmt.Errorf("--input %q: %w", f, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--input %s is given twice", name)
		}
		out[name] = s
	}
	return out, nil
}

// loadSymbolic loads an ONNX file with dimensions left symbolic, or
// returns nil when every dimension has a value (a zoo network, or sizes
// for all).
func loadSymbolic(arg string, inputFlags []string) (*onnx.Symbolic, error) {
	if _, err := os.Stat(arg); err != nil {
		return nil, nil // a zoo name, or loadModel's (one-line) error
	}
	raw, _, err := rawInputFlags(inputFlags)
	if err != nil {
		return nil, err
	}
	return onnx.LoadSymbolic(arg, raw)
}

// loadModel opens an ONNX file, or builds a zoo network when arg is not a
// file but names one.
func loadModel(arg string, inputFlags []string) (*graph.Model, error) {
	shapes, err := parseInputFlags(inputFlags)
	if err != nil {
		return nil, err
	}
	if _, statErr := os.Stat(arg); statErr != nil && !strings.HasSuffix(arg, ".onnx") {
		if spec, lookErr := zoo.Lookup(arg); lookErr == nil {
			var in graph.Shape
			switch {
			case len(shapes) > 1:
				return nil, fmt.Errorf("%s: a zoo network has one input; give one --input", arg)
			case len(shapes) == 1:
				for _, s := range shapes {
					in = s
				}
				if err := spec.CheckInput(in); err != nil {
					return nil, fmt.Errorf("%s: --input: %s", arg, strings.TrimPrefix(err.Error(), "zoo: "))
				}
			}
			return zoo.BuildWith(arg, in)
		}
		return nil, fmt.Errorf("%s: no such file, and not a zoo network (%s)", arg, strings.Join(zoo.Names(), ", "))
	}
	if err := assets.CheckFetched(arg); errors.Is(err, assets.ErrMissing) {
		return nil, err
	}
	return onnx.Load(arg, onnx.Options{Inputs: shapes})
}
