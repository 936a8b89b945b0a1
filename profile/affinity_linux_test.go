package profile

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/inlay-dev/inlay/hw"
)

// TestPinThreadRestores checks that a measurement's pinning is undone:
// after release the thread has its previous affinity again (a pinning left
// on the main thread made a later command in the same process see one
// core: TestProfileCommand's second profile measured everything again).
func TestPinThreadRestores(t *testing.T) {
	cores := hw.HostCores()
	if len(cores) < 2 {
		t.Skip("needs two cores to tell a pinning from none")
	}
	runtime.LockOSThread() // our own lock: the checks stay on this thread
	defer runtime.UnlockOSThread()
	var before, during, after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	release, err := pinThread(cores[:1])
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SchedGetaffinity(0, &during); err != nil || during.Count() != 1 || !during.IsSet(cores[0]) {
		t.Fatalf("pinned affinity: %d cores (err %v), want only core %d", during.Count(), err, cores[0])
	}
	release()
	if err := unix.SchedGetaffinity(0, &after); err != nil || after != before {
		t.Errorf("affinity after release: %d cores (err %v), want the %d before", after.Count(), err, before.Count())
	}
}
