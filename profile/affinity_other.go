//go:build !linux

package profile

import "runtime"

// pinThread only locks the goroutine to its thread where the kernel offers
// no thread affinity call that Go reaches; measurements then run unpinned.
// release unlocks it.
func pinThread(cores []int) (release func(), err error) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread, nil
}
