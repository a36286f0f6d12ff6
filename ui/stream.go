package ui

import (
	"sync"
	"time"
)

// frameInterval is the shortest time between two refreshes of a streaming
// answer (~30 per second).
const frameInterval = 33 * time.Millisecond

// Answer is a streaming answer so far, as the views show it.
type Answer struct {
	Text     string
	Thinking string
	Status   string // "Loading model…", "Waiting for 1 request ahead…"; "" once text flows
	Done     bool
	State    MessageState // with Done: Done, Stopped or Failed ("" reads as Done, or Failed with Err)
	Stats    *Stats
	Err      error
	View     *ContextView // what of the chat the model sees, once known (the context policy)
	Tools    []ToolCall   // the calls so far (nil: none)
}

// Stream carries a streaming answer from the chat service to a view. The
// service publishes the answer so far from its own goroutine (each call
// replaces the last; the last has Done set); the view follows it. No
// goroutine of its own: a refresh is posted to the UI goroutine at most
// once per frame, never two at once, and it reads the newest answer when it
// runs, so the last refresh a view gets has Done set.
type Stream struct {
	mu      sync.Mutex
	cur     Answer
	dirty   bool // cur has not been shown yet
	ended   bool // a Done answer was published: nothing more counts
	do      func(func())
	apply   func(Answer)
	queued  bool // a refresh is posted or waiting for its frame
	timer   *time.Timer
	shownAt time.Time
}

// NewStream returns a stream with nothing published yet.
func NewStream() *Stream { return &Stream{} }

// Publish sets the answer so far. After a Done answer nothing changes.
func (s *Stream) Publish(a Answer) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.cur, s.dirty, s.ended = a, true, a.Done
	post := s.scheduleLocked()
	s.mu.Unlock()
	post()
}

// Follow calls apply through do (fyne.Do in the app) with the answer so
// far, as described on Stream. Call it once.
func (s *Stream) Follow(do func(func()), apply func(Answer)) {
	s.mu.Lock()
	s.do, s.apply = do, apply
	post := s.scheduleLocked()
	s.mu.Unlock()
	post()
}

// scheduleLocked arranges a refresh for a new answer and returns what to
// run once s.mu is released (do may run its function at once).
func (s *Stream) scheduleLocked() func() {
	none := func() {}
	if s.do == nil || !s.dirty {
		return none
	}
	if s.queued {
		// A refresh is waiting for its frame; an ending should not.
		if s.cur.Done && s.timer != nil && s.timer.Stop() {
			s.timer = nil
			return func() { s.do(s.refresh) }
		}
		return none
	}
	s.queued = true
	wait := frameInterval - time.Since(s.shownAt)
	if s.cur.Done || wait <= 0 {
		return func() { s.do(s.refresh) }
	}
	s.timer = time.AfterFunc(wait, func() { s.do(s.refresh) })
	return none
}

// refresh shows the newest answer (on the UI goroutine).
func (s *Stream) refresh() {
	s.mu.Lock()
	a := s.cur
	s.queued, s.dirty, s.timer, s.shownAt = false, false, nil, time.Now()
	apply := s.apply
	s.mu.Unlock()
	if a.Done && a.State == "" {
		a.State = Done
		if a.Err != nil {
			a.State = Failed
		}
	}
	apply(a)
}
