package profile

import "golang.org/x/sys/unix"

// pinThread restricts the calling OS thread to the given CPU cores.
func pinThread(cores []int) error {
	var set unix.CPUSet
	set.Zero()
	for _, c := range cores {
		set.Set(c)
	}
	return unix.SchedSetaffinity(0, &set)
}
