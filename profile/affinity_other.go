//go:build !linux

package profile

// pinThread does nothing where the kernel offers no thread affinity call
// that Go reaches; measurements then run unpinned.
func pinThread(cores []int) error { return nil }
