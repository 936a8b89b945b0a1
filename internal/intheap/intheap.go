// Package intheap is a binary min-heap of ints, for the topological orders
// that break ties by the smallest ID (package graph, HEFT).
package intheap

// Heap is a min-heap of ints; the zero value is empty and ready to use.
type Heap struct{ a []int }

// Len is the number of elements.
func (h *Heap) Len() int { return len(h.a) }

// Push adds x. O(log n).
func (h *Heap) Push(x int) {
	h.a = append(h.a, x)
	for i := len(h.a) - 1; i > 0; {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}

// Pop removes and returns the smallest element; it panics when the heap is
// empty (a programmer error). O(log n).
func (h *Heap) Pop() int {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	for i := 0; ; {
		l, r, s := 2*i+1, 2*i+2, i
		if l < len(h.a) && h.a[l] < h.a[s] {
			s = l
		}
		if r < len(h.a) && h.a[r] < h.a[s] {
			s = r
		}
		if s == i {
			break
		}
		h.a[i], h.a[s] = h.a[s], h.a[i]
		i = s
	}
	return top
}
