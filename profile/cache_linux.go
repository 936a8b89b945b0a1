//go:build linux

package profile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CacheBytes is the size of the largest CPU cache that core sees (its last
// level), read from Linux's sysfs; DefaultCacheBytes when it cannot be read.
func CacheBytes(core int) int {
	dirs, err := filepath.Glob(filepath.Join("/sys/devices/system/cpu", "cpu"+strconv.Itoa(core), "cache", "index*", "size"))
	if err != nil || len(dirs) == 0 {
		return DefaultCacheBytes
	}
	largest := 0
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, ok := parseCacheSize(strings.TrimSpace(string(b))); ok {
			largest = max(largest, n)
		}
	}
	if largest == 0 {
		return DefaultCacheBytes
	}
	return min(largest, MaxCacheBytes)
}
