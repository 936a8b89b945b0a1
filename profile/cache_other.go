//go:build !linux

package profile

// CacheBytes is DefaultCacheBytes where the cache sizes are not read.
func CacheBytes(core int) int { return DefaultCacheBytes }
