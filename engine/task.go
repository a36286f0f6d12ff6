package engine

import (
	"context"
	"iter"

	"perch/engine/train"
)

// The worker's background-task slot. A background task is work the engine
// thread does whenever no request waits, one piece at a time: the worker
// looks at the queue between two pieces and serves what waits there first.
// A fine-tuning run is one (a piece is a step, or a validation batch); the
// worker holds at most one. The task never reads the queue itself.

// PauseReason says why the background task is not stepping.
type PauseReason = train.PauseReason

const (
	PauseServing = train.PauseServing // a request is answered between two pieces
	PauseUser    = train.PauseUser    // the task's owner paused it; it waits for Resume
)

// task is a background task as the worker runs it.
type task struct {
	ctx context.Context // cancelled: the task ends at its next piece
	// next runs the next piece on the engine thread (a coroutine switch:
	// the task runs on the worker's locked OS thread); false once ended.
	next func() (struct{}, bool)
	stop func() // runs the task to its end (ctx is cancelled first)
	// held is non-nil while the owner holds the task: it closes on Resume.
	held func() chan struct{}
	// paused tells the owner why the task is not stepping.
	paused func(PauseReason)
	// heldSaid is set once the owner was told of the current hold.
	heldSaid bool
}

// newTask makes a task of body, which calls piece at each boundary where
// the worker may serve requests and stops once its ctx is cancelled. Call
// it on the engine thread.
func newTask(ctx context.Context, body func(ctx context.Context, piece func()), held func() chan struct{}, paused func(PauseReason)) *task {
	tctx, cancel := context.WithCancel(ctx)
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		body(tctx, func() {
			if !yield(struct{}{}) {
				cancel() // the engine is closing: end at this boundary
			}
		})
	})
	return &task{ctx: tctx, next: next, held: held, paused: paused,
		stop: func() { cancel(); stop() }}
}

// work does the worker's next piece of work: a waiting request first, else
// a piece of the background task; with neither it blocks. It reports false
// once the queue is closed (the task, if any, is run to its end first).
func (e *Engine) work() bool {
	t := e.task
	serve := func(j *job, ok bool) bool {
		if !ok {
			if t != nil {
				t.stop()
				e.task = nil
			}
			return false
		}
		e.pending.Add(-1)
		if t != nil {
			t.paused(PauseServing)
		}
		e.handle(j)
		return true
	}
	if t == nil {
		j, ok := <-e.queue
		return serve(j, ok)
	}
	select {
	case j, ok := <-e.queue:
		return serve(j, ok)
	default:
	}
	if wait := t.held(); wait != nil && t.ctx.Err() == nil {
		if !t.heldSaid {
			t.heldSaid = true
			t.paused(PauseUser)
		}
		select {
		case j, ok := <-e.queue:
			return serve(j, ok)
		case <-wait:
		case <-t.ctx.Done():
		}
		return true
	}
	t.heldSaid = false
	if _, more := t.next(); !more {
		t.stop()
		e.task = nil
	}
	return true
}
