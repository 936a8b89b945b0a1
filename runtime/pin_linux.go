//go:build linux

package runtime

import (
	"fmt"
	"time"

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

// preciseTimers lowers the calling thread's timer slack to a nanosecond
// (Linux rounds a sleeping thread's wake-up up by its slack, 50 µs by
// default) and returns a function that puts the default back and reports
// whether it could. The caller has locked its goroutine to the thread.
func preciseTimers() (restore func() bool) {
	if unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) != nil {
		return func() bool { return true }
	}
	return func() bool { return unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) == nil }
}

// sleepFor sleeps in the kernel (nanosleep), not on a Go timer: Go's
// timers wake up to a millisecond late on Linux (the poller waits in whole
// milliseconds); nanosleep on a thread with preciseTimers wakes within
// about a tenth of that.
func sleepFor(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// pinAway pins the calling OS thread to the CPUs it may run on now other
// than the given cores and returns a function that restores its previous
// affinity and reports whether it could; it does nothing (and restore
// reports true) when no CPU would be left or the affinity cannot be
// changed. The caller has locked its goroutine to the thread.
func pinAway(cores []int) (restore func() bool) {
	var old unix.CPUSet
	if unix.SchedGetaffinity(0, &old) != nil {
		return func() bool { return true }
	}
	set := old
	for _, c := range cores {
		set.Clear(c)
	}
	if set.Count() == 0 || set == old || unix.SchedSetaffinity(0, &set) != nil {
		return func() bool { return true }
	}
	return func() bool { return unix.SchedSetaffinity(0, &old) == nil }
}
