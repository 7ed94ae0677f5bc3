package notify

import (
	"slices"
	"sync"
	"testing"
)

func TestDrainDeliversInOrder(t *testing.T) {
	var q Queue[int]
	for i := range 5 {
		q.Push(i)
	}
	var got []int
	q.Drain(func(e int) { got = append(got, e) })
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	got = nil
	q.Drain(func(e int) { got = append(got, e) })
	if len(got) != 0 {
		t.Fatalf("second drain delivered %v, want nothing", got)
	}
}

func TestReentrantPushIsDeliveredAfterTheCallback(t *testing.T) {
	var q Queue[int]
	var got []int
	var deliver func(int)
	deliver = func(e int) {
		got = append(got, e)
		if e == 1 {
			q.Push(2)
			q.Drain(deliver) // already draining: returns at once
			got = append(got, -1)
		}
	}
	q.Push(1)
	q.Drain(deliver)
	if want := []int{1, -1, 2}; !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
}

func TestPanickingCallbackDoesNotWedgeTheQueue(t *testing.T) {
	var q Queue[int]
	q.Push(1)
	func() {
		defer func() { _ = recover() }()
		q.Drain(func(int) { panic("boom") })
	}()
	q.Push(2)
	var got []int
	q.Drain(func(e int) { got = append(got, e) })
	if !slices.Equal(got, []int{2}) {
		t.Fatalf("after a panic, delivered %v, want [2]", got)
	}
}

func TestConcurrentPushesAreAllDeliveredOnce(t *testing.T) {
	var q Queue[int]
	var mu sync.Mutex
	seen := map[int]int{}
	deliver := func(e int) { mu.Lock(); seen[e]++; mu.Unlock() }
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				q.Push(g*100 + i)
				q.Drain(deliver)
			}
		})
	}
	wg.Wait()
	q.Drain(deliver)
	if len(seen) != 800 {
		t.Fatalf("delivered %d distinct events, want 800", len(seen))
	}
	for e, n := range seen {
		if n != 1 {
			t.Fatalf("event %d delivered %d times", e, n)
		}
	}
}
