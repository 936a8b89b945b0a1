package profile

import "strconv"

// Bounds of CacheBytes.
const (
	// DefaultCacheBytes stands for a last-level cache whose size is
	// unknown (a large one, so that eviction is thorough).
	DefaultCacheBytes = 64 << 20
	// MaxCacheBytes caps the size read: the eviction buffer is twice it.
	MaxCacheBytes = 256 << 20
)

// parseCacheSize reads a sysfs cache size: "32768K", "1M", "512" (bytes).
func parseCacheSize(s string) (int, bool) {
	mult := 1
	switch {
	case len(s) > 1 && (s[len(s)-1] == 'K' || s[len(s)-1] == 'k'):
		mult, s = 1<<10, s[:len(s)-1]
	case len(s) > 1 && (s[len(s)-1] == 'M' || s[len(s)-1] == 'm'):
		mult, s = 1<<20, s[:len(s)-1]
	case len(s) > 1 && (s[len(s)-1] == 'G' || s[len(s)-1] == 'g'):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > MaxCacheBytes/mult {
		if err == nil && n > 0 {
			return MaxCacheBytes, true
		}
		return 0, false
	}
	return n * mult, true
}
