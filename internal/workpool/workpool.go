// Package workpool runs numbered tasks on a fixed number of goroutines.
package workpool

import (
	"context"
	"sync"
)

// Each calls f(i) for every i in [0, n) on max(workers, 1) goroutines.
// After each call it calls done(k, i), one call at a time, with k the
// number of calls finished so far; done may be nil. It stops handing out
// tasks once ctx is done, waits for the running ones and returns ctx.Err().
// f writes its result into the caller's slot i, so results keep their
// order whatever the number of workers.
func Each(ctx context.Context, n, workers int, f func(i int), done func(k, i int)) error {
	next := make(chan int)
	var mu sync.Mutex
	finished := 0
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
				if done != nil {
					mu.Lock()
					finished++
					done(finished, i)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return ctx.Err()
}
