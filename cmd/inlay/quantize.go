package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/quant"
)

func newQuantizeCmd() *cobra.Command {
	var (
		inputs  []string
		format  string
		out     string
		ortLib  string
		samples int
		seed    int64
	)
	cmd := &cobra.Command{
		Use:   "quantize MODEL -o OUT.onnx",
		Short: "Quantize a float model as ONNX Runtime's quantizer does (QDQ, QOperator or dynamic)",
		Long: "MODEL is an ONNX file, cache:FILE.onnx or a zoo network; symbolic input\n" +
			"dimensions need --input. The static formats (qdq, qoperator) calibrate\n" +
			"activation ranges on --samples ONNX Runtime runs of the float model on\n" +
			"seeded random inputs (uniform in [-1, 1) for floats): a quantized model\n" +
			"to inspect, plan and run, not one tuned for accuracy. dynamic needs no\n" +
			"calibration. See package quant for the forms written.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("quantize: -o OUT.onnx is required")
			}
			f, err := quant.ParseFormat(format)
			if err != nil {
				return fmt.Errorf("quantize: --format: %w", err)
			}
			if samples < 1 {
				return fmt.Errorf("quantize: --samples %d: want at least 1", samples)
			}
			res, data, err := app.Quantize(app.QuantizeInput{Model: args[0], Inputs: inputs, Format: f, Library: ortLib, Samples: samples, Seed: seed})
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return fmt.Errorf("quantize: %w", err)
			}
			note := ""
			if res.Upgraded != 0 {
				note = fmt.Sprintf(" (opset %d upgraded to 13)", res.Upgraded)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s, %d operators quantized, %d nodes%s\n", out, f, res.Quantized, len(res.Model.Nodes), note)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&inputs, "input", nil, "shape of a graph input, name=d0,d1,... (repeatable)")
	fl.StringVar(&format, "format", "qdq", "qdq, qoperator or dynamic")
	fl.StringVarP(&out, "output", "o", "", "file to write")
	fl.StringVar(&ortLib, "ort-lib", assets.ORTLibrary(), "ONNX Runtime shared library (calibration)")
	fl.IntVar(&samples, "samples", 3, "calibration runs (static formats)")
	fl.Int64Var(&seed, "seed", 1, "seed of the calibration inputs")
	return cmd
}
