//go:build !linux

package runtime

// pinThread does nothing where the runtime knows no thread affinity call;
// the workers then run wherever the OS puts them.
func pinThread(cores []int) (restore func() bool, err error) {
	return func() bool { return true }, nil
}
