package main

import "github.com/spf13/cobra"

// Temporary until the owners of these commands land them.
func newDemoCmd() *cobra.Command { return &cobra.Command{Use: "demo"} }
