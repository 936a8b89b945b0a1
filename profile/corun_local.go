package profile

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/ort"
)

// corun runs the condition's loads, each on a thread pinned to its
// neighbour's cores (as measurements are), waits until every load ran
// once, times the subgraph with timed, and stops the loads.
func (l *Local) corun(ctx context.Context, cond CorunCondition, timed func() ([]time.Duration, error)) (CorunTiming, error) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	ready := make(chan error, len(cond.Loads))
	var moved atomic.Int64
	var elapsed atomic.Int64
	for _, ld := range cond.Loads {
		proc, err := l.pl.Find(ld.Processor)
		if err != nil {
			stop.Store(true)
			wg.Wait()
			return CorunTiming{}, err
		}
		pr := l.pl.Processors[proc]
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := pinThread(pr.Cores) // restored after: the pinning never leaks
			if err != nil {
				ready <- fmt.Errorf("pin %s to cores %v: %w", pr.Name, pr.Cores, err)
				return
			}
			defer release()
			if ld.StreamBytes > 0 {
				n, d := stream(&stop, ld.StreamBytes, ld.Duty, ready)
				moved.Add(n)
				elapsed.Add(int64(d))
				return
			}
			l.loopModel(&stop, ld, ready)
		}()
	}
	for range cond.Loads {
		if err := <-ready; err != nil {
			stop.Store(true)
			wg.Wait()
			return CorunTiming{}, err
		}
	}
	samples, err := timed()
	stop.Store(true)
	wg.Wait()
	if err != nil {
		return CorunTiming{}, err
	}
	s := Summarize(samples)
	ct := CorunTiming{Median: s.Median, Reps: s.Reps}
	streams := 0
	for _, ld := range cond.Loads {
		if ld.StreamBytes > 0 {
			streams++
		}
	}
	if e := elapsed.Load(); e > 0 && streams > 0 {
		// each stream's bytes over its own time, summed: bytes / (Σ time / n) = n·bytes/Σ time
		ct.StreamGBs = float64(moved.Load()) * float64(streams) / float64(e)
	}
	return ct, nil
}

// stream is the streaming kernel: it copies one half of a buffer of n
// bytes into the other, in 64 KiB chunks, for duty of every StreamSlice
// and sleeps the rest, until stop; it signals ready after its first
// slice. It returns the bytes it moved (read plus written) and the time
// it ran.
func stream(stop *atomic.Bool, n int64, duty float64, ready chan<- error) (int64, time.Duration) {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(i)
	}
	half := n / 2
	const chunk = 64 << 10
	var moved int64
	var off int64
	start := time.Now()
	first := true
	for !stop.Load() {
		sliceStart := time.Now()
		busy := time.Duration(float64(StreamSlice) * duty)
		for time.Since(sliceStart) < busy {
			for c := 0; c < 8; c++ {
				if off+chunk > half {
					off = 0
				}
				copy(buf[half+off:half+off+chunk], buf[off:off+chunk])
				off += chunk
				moved += 2 * chunk
			}
		}
		if rest := StreamSlice - time.Since(sliceStart); duty < 1 && rest > 0 {
			time.Sleep(rest)
		}
		if first {
			first = false
			ready <- nil
		}
	}
	return moved, time.Since(start)
}

// loopModel runs a load's real subgraphs one after the other until stop,
// signalling ready after the first round (or the first error).
func (l *Local) loopModel(stop *atomic.Bool, ld CorunLoad, ready chan<- error) {
	type prepared struct {
		sess *ort.Session
		data []*graph.Data
	}
	var ps []prepared
	defer func() {
		for _, p := range ps {
			p.sess.Close()
		}
	}()
	rng := rand.New(rand.NewSource(2))
	for _, m := range ld.Models {
		outputs, err := graphOutputs(m.Model)
		if err != nil {
			ready <- err
			return
		}
		names := make([]string, len(m.Inputs))
		data := make([]*graph.Data, len(m.Inputs))
		for i, in := range m.Inputs {
			names[i] = in.Name
			data[i] = ort.RandomData(in.DType, in.Shape, rng)
		}
		sess, err := l.rt.NewSession(m.Model, names, outputs, ort.SessionOptions{IntraOpThreads: 1, InterOpThreads: 1})
		if err != nil {
			ready <- err
			return
		}
		ps = append(ps, prepared{sess, data})
	}
	first := true
	for !stop.Load() {
		for _, p := range ps {
			if _, err := p.sess.Run(p.data); err != nil {
				if first {
					ready <- err
				}
				return
			}
		}
		if first {
			first = false
			ready <- nil
		}
	}
}
