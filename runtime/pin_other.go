//go:build !linux

package runtime

import "time"

// pinThread does nothing where the runtime knows no thread affinity call;
// the workers then run wherever the OS puts them.
func pinThread(cores []int) (restore func() bool, err error) {
	return func() bool { return true }, nil
}

// preciseTimers does nothing where the runtime knows no timer slack.
func preciseTimers() (restore func() bool) { return func() bool { return true } }

// sleepFor is time.Sleep where the runtime knows no finer sleep.
func sleepFor(d time.Duration) { time.Sleep(d) }

// pinAway does nothing where the runtime knows no thread affinity call.
func pinAway(cores []int) (restore func() bool) { return func() bool { return true } }
