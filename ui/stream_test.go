package ui_test

import (
	"sync/atomic"
	"testing"

	"perch/ui"
	"perch/ui/internal/fake"
)

// TestStreamingRefreshesAreCoalesced: 5000 answers published as fast as
// they come reach the view as a few refreshes, never two posted at once,
// the last with Done and the whole text.
func TestStreamingRefreshesAreCoalesced(t *testing.T) {
	l := fake.NewLoop()
	var posted, maxPosted atomic.Int32
	do := func(f func()) {
		if n := posted.Add(1); n > maxPosted.Load() {
			maxPosted.Store(n)
		}
		l.Do(func() { posted.Add(-1); f() })
	}
	st := ui.NewStream()
	applies := 0
	var last ui.Answer
	st.Follow(do, func(a ui.Answer) { applies++; last = a })
	go func() {
		text := ""
		for i := 0; i < 5000; i++ {
			text += "x"
			st.Publish(ui.Answer{Text: text})
		}
		st.Publish(ui.Answer{Text: text, Done: true})
		st.Publish(ui.Answer{Text: "after the end"}) // ignored
	}()
	l.Until(t, "stream end", func() bool { return last.Done })
	if len(last.Text) != 5000 || last.State != ui.Done {
		t.Fatalf("final = %d chars, state %q", len(last.Text), last.State)
	}
	// 5000 tokens must not mean 5000 re-renders.
	if applies > 200 || maxPosted.Load() > 1 {
		t.Fatalf("%d refreshes for 5000 tokens, up to %d posted at once", applies, maxPosted.Load())
	}
	t.Logf("%d refreshes for 5000 tokens", applies)
}
