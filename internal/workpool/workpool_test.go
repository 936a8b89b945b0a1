package workpool

import (
	"context"
	"testing"
)

func TestEach(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 20} {
		out := make([]int, 10)
		var seen []int
		err := Each(context.Background(), len(out), workers, func(i int) { out[i] = i * i }, func(k, i int) { seen = append(seen, k) })
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range out {
			if v != i*i {
				t.Errorf("workers %d: out[%d] = %d", workers, i, v)
			}
		}
		for k, v := range seen {
			if v != k+1 {
				t.Errorf("workers %d: done counts %v, want 1..10 in order", workers, seen)
				break
			}
		}
	}
}

func TestEachCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := 0
	err := Each(ctx, 100, 1, func(i int) {
		ran++
		if i == 4 {
			cancel()
		}
	}, nil)
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if ran < 5 || ran > 6 {
		t.Errorf("ran %d tasks after cancelling at the fifth, want 5 (or 6 if one was already handed out)", ran)
	}
}
