// Package hwtest holds platform fixtures that tests of several packages
// share.
package hwtest

import (
	"testing"

	"github.com/inlay-dev/inlay/hw"
)

// Preset is the built-in platform name; an error fails the test.
func Preset(tb testing.TB, name string) *hw.Platform {
	tb.Helper()
	pl, err := hw.Preset(name)
	if err != nil {
		tb.Fatal(err)
	}
	return pl
}

// HostPair is the host preset cut to two processors on this process's
// cores (one core twice when the process may use only one).
func HostPair(tb testing.TB) *hw.Platform {
	tb.Helper()
	cores := hw.HostCores()
	if len(cores) == 1 {
		cores = append(cores, cores[0])
	}
	pl, err := hw.Host(cores[:2])
	if err != nil {
		tb.Fatal(err)
	}
	return pl
}
