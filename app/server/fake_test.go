package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"perch/engine"
)

// fakeEngine is an engine.Generator with the real engine's contract: a
// bounded queue (slots count the running request too) that answers
// ErrBusy at once when full, one worker serving requests in admission
// order, cancellation between steps, and exactly one Done or Error event
// before the channel closes.
type fakeEngine struct {
	slots     chan struct{}
	queue     chan *fakeJob
	gate      chan struct{} // the worker waits for it before each request
	tokens    []engine.Token
	stepDelay time.Duration
	stats     engine.Stats
	stop      string
	failAfter int                 // >0: an Error event after this many tokens
	tagTokens bool                // the first token's text is "#<job id>"
	calls     []engine.ParsedCall // sent after the tokens

	mu        sync.Mutex
	seq       int
	admitted  []int
	served    []int
	cancelled int
	active    int
	maxActive int
	requests  []engine.Request
	done      chan struct{}
}

type fakeJob struct {
	id  int
	ctx context.Context
	ch  chan engine.Event
}

func newFakeEngine(queue int, texts ...string) *fakeEngine {
	f := &fakeEngine{
		slots: make(chan struct{}, queue), queue: make(chan *fakeJob, queue),
		gate: make(chan struct{}), stop: engine.StopEOS, done: make(chan struct{}),
	}
	close(f.gate)
	for i, t := range texts {
		f.tokens = append(f.tokens, engine.Token{ID: int32(100 + i), Text: t})
	}
	f.stats = engine.Stats{PromptTokens: 7, GeneratedTokens: len(texts)}
	go f.work()
	return f
}

// hold makes the worker wait until the returned func is called.
func (f *fakeEngine) hold() (release func()) {
	g := make(chan struct{})
	f.mu.Lock()
	f.gate = g
	f.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(g) }) }
}

func (f *fakeEngine) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	select {
	case f.slots <- struct{}{}:
	default:
		return nil, engine.ErrBusy
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	job := &fakeJob{id: f.seq, ctx: ctx, ch: make(chan engine.Event, 2)}
	f.admitted = append(f.admitted, job.id)
	f.requests = append(f.requests, req)
	f.queue <- job // never blocks: slots bound the queue
	job.ch <- engine.Event{Kind: engine.EventQueued, Position: len(f.queue)}
	return job.ch, nil
}

// close stops the worker once the queue is empty and waits for it.
func (f *fakeEngine) close() {
	close(f.queue)
	<-f.done
}

func (f *fakeEngine) work() {
	defer close(f.done)
	for job := range f.queue {
		f.mu.Lock()
		gate := f.gate
		f.mu.Unlock()
		<-gate
		f.run(job)
		<-f.slots
	}
}

func (f *fakeEngine) run(job *fakeJob) {
	f.mu.Lock()
	f.served = append(f.served, job.id)
	f.active++
	f.maxActive = max(f.maxActive, f.active)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.active--
		f.mu.Unlock()
		close(job.ch)
	}()
	send := func(ev engine.Event) bool {
		select {
		case job.ch <- ev:
			return true
		case <-job.ctx.Done():
			return false
		}
	}
	cancelled := func() {
		f.mu.Lock()
		f.cancelled++
		f.mu.Unlock()
		job.ch <- engine.Event{Kind: engine.EventDone, StopReason: engine.StopCancelled, Stats: &engine.Stats{}}
	}
	for i, tok := range f.tokens {
		if f.failAfter > 0 && i == f.failAfter {
			job.ch <- engine.Event{Kind: engine.EventError, Err: errFake}
			return
		}
		if f.stepDelay > 0 {
			select {
			case <-time.After(f.stepDelay):
			case <-job.ctx.Done():
			}
		}
		if i == 0 && f.tagTokens {
			tok.Text = fmt.Sprintf("#%d", job.id)
		}
		if job.ctx.Err() != nil || !send(engine.Event{Kind: engine.EventToken, Token: tok}) {
			cancelled()
			return
		}
	}
	for _, c := range f.calls {
		send(engine.Event{Kind: engine.EventToolCall, Call: c})
	}
	st := f.stats
	job.ch <- engine.Event{Kind: engine.EventDone, StopReason: f.stop, Stats: &st}
}

type fakeErr string

func (e fakeErr) Error() string { return string(e) }

const errFake = fakeErr("fake engine failure")

func (f *fakeEngine) snapshot() (admitted, served []int, cancelled, maxActive int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.admitted...), append([]int(nil), f.served...), f.cancelled, f.maxActive
}

func (f *fakeEngine) lastRequest() engine.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1]
}
