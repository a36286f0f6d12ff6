package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"perch/engine/tensor"
)

func events(evs ...Event) <-chan Event {
	ch := make(chan Event, len(evs))
	for _, ev := range evs {
		ch <- ev
	}
	close(ch)
	return ch
}

// TestCollectorAccumulatesOneAnswer: text and thinking accumulate apart,
// the status follows the stages in words and clears once tokens flow, and
// exactly one ending counts.
func TestCollectorAccumulatesOneAnswer(t *testing.T) {
	var statuses []string
	c := Collect(events(
		Event{Kind: EventQueued, Position: 2},
		Event{Kind: EventProgress, Stage: StageImage, Fraction: 0.5},
		Event{Kind: EventProgress, Stage: StagePrefill, Fraction: 1},
		Event{Kind: EventToken, Token: Token{Text: "Hm", Thinking: true}},
		Event{Kind: EventToken, Token: Token{Text: "A "}},
		Event{Kind: EventToken, Token: Token{Text: "perch."}},
		Event{Kind: EventDone, StopReason: StopEOS, Stats: &Stats{GeneratedTokens: 3}},
		Event{Kind: EventError, Err: errors.New("late")},
	), func(ev Event, c *Collector) { statuses = append(statuses, c.Status()) })
	if c.Text() != "A perch." || c.Thinking() != "Hm" || c.Err != nil || c.StopReason != StopEOS || c.Stats.GeneratedTokens != 3 || c.Cancelled() {
		t.Fatalf("collected %q / %q, err %v, stop %q", c.Text(), c.Thinking(), c.Err, c.StopReason)
	}
	want := []string{"Waiting for 2 requests ahead…", "Looking at the image… 50%", "Reading…", "", "", "", "", ""}
	for i := range want {
		if statuses[i] != want[i] {
			t.Fatalf("status %d = %q, want %q (all: %q)", i, statuses[i], want[i], statuses)
		}
	}
	if c := Collect(events(Event{Kind: EventToken, Token: Token{Text: "cut"}}), nil); !errors.Is(c.Err, ErrNoResult) || c.Text() != "cut" {
		t.Fatalf("a channel closed without an ending: err %v", c.Err)
	}
	if c := Collect(events(Event{Kind: EventDone, StopReason: StopCancelled}), nil); !c.Cancelled() || c.Err != nil {
		t.Fatal("a cancelled answer is not an error")
	}
}

// TestDoneHookRunsOnceAtTheEnd: OnDone runs once after the last event of a
// generation, and once when Generate refuses a request.
func TestDoneHookRunsOnceAtTheEnd(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{MaxContext: 64})
	var calls atomic.Int32
	req := Request{PromptIDs: []int32{2, 485, 494}, MaxTokens: 3, IgnoreEOS: true, OnDone: func() { calls.Add(1) }}
	ch, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for range ch {
	}
	e.onEngine(func(tensor.Backend) {}) // the worker has moved past the job
	if calls.Load() != 1 {
		t.Fatalf("OnDone ran %d times", calls.Load())
	}
	req.PromptIDs = make([]int32, 100) // over the context
	req.OnDone = func() { calls.Add(1) }
	if _, err := e.Generate(context.Background(), req); err == nil {
		t.Fatal("an over-long prompt was accepted")
	}
	if calls.Load() != 2 {
		t.Fatalf("a refused request ran OnDone %d times in all, want once more", calls.Load())
	}
}
