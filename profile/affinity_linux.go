package profile

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// pinThread locks the calling goroutine to its OS thread and restricts the
// thread to the given CPU cores (none: it only locks). The returned
// release puts the thread's previous affinity back and unlocks it; when
// the affinity cannot be restored it leaves the thread locked, so that it
// ends with the goroutine. Restoring matters: a goroutine that exits
// locked on the process's main thread does not end the thread (Go parks
// it), and the main thread's affinity is what /proc/self/status, and so
// hw.HostCores, reads: a pinned main thread would make the next command in
// the same process see one core.
func pinThread(cores []int) (release func(), err error) {
	runtime.LockOSThread()
	if len(cores) == 0 {
		return runtime.UnlockOSThread, nil
	}
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	set.Zero()
	for _, c := range cores {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		if unix.SchedSetaffinity(0, &old) == nil {
			runtime.UnlockOSThread()
		}
	}, nil
}
