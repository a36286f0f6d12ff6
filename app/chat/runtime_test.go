package chat

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"perch/ui"
)

// TestRuntimeTellsChangesInOrder: watchers see every state change, oldest
// first, so the header cannot end on "loading…" after the model loaded.
func TestRuntimeTellsChangesInOrder(t *testing.T) {
	rt, _ := newRuntime(&fakeEngine{}, e2b)
	var mu sync.Mutex
	var seen []string
	rt.Watch(func(s ui.ModelState) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, s.Name)
	})
	const n = 500
	for i := 0; i < n; i++ {
		rt.mu.Lock()
		rt.setLocked(ui.ModelState{ID: "e2b", Name: strconv.Itoa(i), Loading: i%2 == 0, Loaded: i%2 == 1})
		rt.mu.Unlock()
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		got := len(seen)
		mu.Unlock()
		if got == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watchers were told %d of %d changes", got, n)
		}
	}
	for i, name := range seen {
		if name != strconv.Itoa(i) {
			t.Fatalf("change %d told as %q: out of order (%v…)", i, name, seen[max(0, i-3):min(len(seen), i+3)])
		}
	}
}
