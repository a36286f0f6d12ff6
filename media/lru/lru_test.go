package lru

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestEvictsLeastRecentlyUsedWithinLimit(t *testing.T) {
	var evicted []string
	c := New[string](10, func(v string) { evicted = append(evicted, v) })
	c.Put("a", "A", 4)
	c.Put("b", "B", 4)
	if v, ok := c.Get("a"); !ok || v != "A" { // a is now the most recent
		t.Fatalf("Get(a) = %q, %v", v, ok)
	}
	c.Put("c", "C", 4) // 12 > 10: b goes
	if _, ok := c.Get("b"); ok {
		t.Fatal("b should have been evicted")
	}
	if !slices.Equal(evicted, []string{"B"}) || c.Used() != 8 || c.Len() != 2 {
		t.Fatalf("evicted %v, used %d, len %d", evicted, c.Used(), c.Len())
	}
	if c.Put("huge", "H", 11) {
		t.Fatal("a value over the whole limit must not be kept")
	}
	c.Put("a", "A2", 2) // replacing drops the old value
	if v, _ := c.Get("a"); v != "A2" || c.Used() != 6 {
		t.Fatalf("after replace: %q, used %d", v, c.Used())
	}
	c.Clear()
	if c.Len() != 0 || c.Used() != 0 || !slices.Equal(evicted, []string{"B", "A", "A2", "C"}) {
		t.Fatalf("after clear: len %d, used %d, evicted %v", c.Len(), c.Used(), evicted)
	}
}

func TestConcurrentUseStaysWithinLimit(t *testing.T) {
	c := New[int](100, nil)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				k := fmt.Sprint((g*7 + i) % 40)
				c.Put(k, i, 7)
				c.Get(k)
			}
		}()
	}
	wg.Wait()
	if c.Used() > 100 || c.Used() != int64(7*c.Len()) {
		t.Fatalf("used %d for %d entries of 7", c.Used(), c.Len())
	}
}
