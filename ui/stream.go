package ui

import (
	"strings"
	"sync/atomic"
	"time"
)

// frameInterval is the shortest time between two refreshes of a streaming
// answer (~30 per second).
const frameInterval = 33 * time.Millisecond

// answerSoFar is the accumulated state of a streaming answer.
type answerSoFar struct {
	Text     string
	Thinking string
	Status   string
	Done     bool
	State    MessageState
	Stats    *Stats
	Err      error
}

// follow drains stream on its own goroutine and calls apply on the Fyne
// goroutine (through e.do) with the answer so far, at most once per
// frameInterval and never with two calls queued; the last call has Done set.
// (e.do is fyne.Do in the app.)
func follow(e *env, stream <-chan Delta, apply func(answerSoFar)) {
	e.run(func() {
		var acc answerSoFar
		var text, thinking strings.Builder
		var queued atomic.Bool // a refresh is waiting to run on the UI goroutine
		var last time.Time
		dirty := false
		tick := time.NewTicker(frameInterval)
		defer tick.Stop()
		post := func(force bool) {
			if !dirty || (!force && (queued.Load() || time.Since(last) < frameInterval)) {
				return
			}
			acc.Text, acc.Thinking = text.String(), thinking.String()
			snap := acc
			dirty = false
			last = time.Now()
			queued.Store(true)
			e.do(func() {
				queued.Store(false)
				apply(snap)
			})
		}
		for {
			select {
			case d, ok := <-stream:
				if !ok {
					if !acc.Done { // closed without a Done delta
						acc.Done, acc.State = true, Interrupted
					}
					dirty = true
					post(true)
					return
				}
				if acc.Done {
					continue // exactly one Done counts
				}
				text.WriteString(d.Text)
				thinking.WriteString(d.Thinking)
				if d.Status != "" || d.Text != "" || d.Thinking != "" {
					acc.Status = d.Status
				}
				if d.Done {
					acc.Done, acc.State, acc.Stats, acc.Err = true, d.State, d.Stats, d.Err
					if acc.State == "" {
						acc.State = Done
						if d.Err != nil {
							acc.State = Failed
						}
					}
				}
				dirty = true
				if !acc.Done {
					post(false)
				}
			case <-tick.C:
				post(false)
			}
		}
	})
}
