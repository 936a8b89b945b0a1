//go:build !unix

package sim_test

import "time"

// cpuTime is not measured here: the benchmark's cpu-ratio is NaN.
func cpuTime() time.Duration { return 0 }
