package main

import (
	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/report/view"
)

func newPlatformsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "platforms",
		Short: "List the platform presets, or show one platform",
		Long: "Platforms describe a device's processors (kind, backends, data types with peak\n" +
			"throughput, memory bandwidth, overheads, operator support) and the links between\n" +
			"their memory domains. Presets are starting points to calibrate, not measurements.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return view.Platforms(cmd.OutOrStdout())
		},
	}
	cmd.AddCommand(newPlatformsShowCmd())
	return cmd
}

func newPlatformsShowCmd() *cobra.Command {
	var asYAML bool
	cmd := &cobra.Command{
		Use:   "show NAME|FILE",
		Short: "Show a preset or a platform file: processors, operator support, links",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := hw.Resolve(args[0])
			if err != nil {
				return err
			}
			return view.Platform(cmd.OutOrStdout(), p, asYAML)
		},
	}
	cmd.Flags().BoolVar(&asYAML, "yaml", false, "print the platform as YAML (a preset's embedded file, with its source citations)")
	return cmd
}
