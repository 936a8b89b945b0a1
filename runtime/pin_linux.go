//go:build linux

package runtime

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// pinThread pins the calling OS thread to the given CPU cores and returns a
// function that restores the thread's previous affinity (false when it
// could not). The caller has locked its goroutine to the thread
// (runtime.LockOSThread).
func pinThread(cores []int) (restore func() bool, err error) {
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("read CPU affinity: %w", err)
	}
	set.Zero()
	for _, c := range cores {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("pin to cores %v: %w", cores, err)
	}
	return func() bool { return unix.SchedSetaffinity(0, &old) == nil }, nil
}
