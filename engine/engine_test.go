package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"perch/engine/golden"
	"perch/engine/mlx"
)

const testdata = "../testdata"

// testBackends are the backends the engine tests run on: Go, and MLX where
// libmlxc loads.
func testBackends() []string {
	if mlx.Available() == nil {
		return []string{BackendGo, BackendMLX}
	}
	return []string{BackendGo}
}

func TestMain(m *testing.M) {
	if err := mlx.Available(); err != nil {
		fmt.Println("engine: libmlxc not found, engine tests run on the Go backend only:", err)
	}
	os.Exit(m.Run())
}

func openTiny(t *testing.T, name string, opts Options) *Engine {
	t.Helper()
	if opts.Backend == "" {
		opts.Backend = BackendGo
	}
	e, err := Open(filepath.Join(testdata, "models", name), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func goldenIDs(t *testing.T, name, tensor string) []int32 {
	t.Helper()
	g, err := golden.Open(filepath.Join(testdata, "goldens", name, "golden.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ids, err := g.I32(tensor)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func f32(v float32) *float32 { return &v }

// collect drains a generation and returns its token ids and final event.
func collect(t *testing.T, ch <-chan Event) ([]int32, Event) {
	t.Helper()
	var ids []int32
	var last Event
	for ev := range ch {
		switch ev.Kind {
		case EventToken:
			if ev.Token.ID >= 0 {
				ids = append(ids, ev.Token.ID)
			}
		case EventDone, EventError:
			last = ev
		}
	}
	return ids, last
}

func TestGreedyMatchesGoldens(t *testing.T) {
	for _, name := range []string{"text-tiny", "text-tiny-q4"} {
		e := openTiny(t, name, Options{PrefillChunk: 5})
		want := goldenIDs(t, name, "generated_ids")
		ch, err := e.Generate(context.Background(), Request{
			PromptIDs: goldenIDs(t, name, "input_ids"), MaxTokens: len(want), IgnoreEOS: true,
			Sampling: Sampling{Temperature: f32(0)},
		})
		if err != nil {
			t.Fatal(err)
		}
		got, last := collect(t, ch)
		if last.Kind != EventDone || last.StopReason != StopMaxTokens {
			t.Fatalf("%s: ended with %+v", name, last)
		}
		if !slices.Equal(got, want) || !slices.Equal(last.Stats.TokenIDs, want) {
			t.Fatalf("%s: greedy ids %v (stats %v), want %v", name, got, last.Stats.TokenIDs, want)
		}
		if last.Stats.PromptTokens != 12 || last.Stats.GeneratedTokens != len(want) || last.Stats.Backend != "go" {
			t.Fatalf("%s: stats %+v", name, last.Stats)
		}
	}
}

func TestStopsOnEOS(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	// The greedy trajectory of this prompt, with 106 (<turn|>, an EOS id of
	// config.json) planted as the prompt's continuation, ends at once once
	// sampling picks an EOS: force it by suppressing nothing and checking
	// that generation of an EOS id stops with reason "stop".
	want := goldenIDs(t, "text-tiny", "generated_ids")
	e.stops[want[3]] = true // pretend the 4th greedy token ends the turn
	ch, err := e.Generate(context.Background(), Request{PromptIDs: goldenIDs(t, "text-tiny", "input_ids"), MaxTokens: 16, Sampling: Sampling{Temperature: f32(0)}})
	if err != nil {
		t.Fatal(err)
	}
	got, last := collect(t, ch)
	// The stop token ends the answer: no token event, but it is in the ids.
	if last.StopReason != StopEOS || !slices.Equal(got, want[:3]) || !slices.Equal(last.Stats.TokenIDs, want[:4]) {
		t.Fatalf("got %v, ids %v (%s), want %v then stop", got, last.Stats.TokenIDs, last.StopReason, want[:4])
	}
}

// cancelAfter starts an endless generation, cancels it after n tokens and
// returns how many tokens arrived and the final event.
func cancelAfter(t *testing.T, e *Engine, n int) (int, Event) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := e.Generate(ctx, Request{PromptIDs: []int32{2, 485, 494}, MaxTokens: 100000, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	var last Event
	for ev := range ch {
		if ev.Kind == EventToken {
			if got++; got == n {
				cancel()
			}
		}
		last = ev
	}
	return got, last
}

func TestCancelStopsGeneration(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	n, last := cancelAfter(t, e, 3)
	if last.Kind != EventDone || last.StopReason != StopCancelled {
		t.Fatalf("ended with %+v after cancel", last)
	}
	if n > 50 {
		t.Fatalf("%d tokens after cancelling at 3", n)
	}
	// The engine serves the next request normally.
	ch, err := e.Generate(context.Background(), Request{PromptIDs: []int32{2, 485}, MaxTokens: 2, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, last := collect(t, ch); len(got) != 2 || last.Kind != EventDone {
		t.Fatalf("next request: %v %+v", got, last)
	}
}

func TestBusyWhenQueueFull(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{QueueSize: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long := Request{PromptIDs: []int32{2, 485}, MaxTokens: 100000, IgnoreEOS: true}
	first, err := e.Generate(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	<-first // running (queued event) — wait until it is picked up
	deadline := time.Now().Add(5 * time.Second)
	for e.pending.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if _, err := e.Generate(ctx, long); err != nil { // fills the queue of 1
		t.Fatal(err)
	}
	if _, err := e.Generate(ctx, long); !errors.Is(err, ErrBusy) {
		t.Fatalf("third request: %v, want ErrBusy", err)
	}
	cancel()
}

func TestBadRequests(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{MaxContext: 64})
	bad := []Request{
		{PromptIDs: []int32{2, 99999}},
		{PromptIDs: make([]int32, 64)},
		{PromptIDs: []int32{2}, Sampling: Sampling{Temperature: f32(-1)}},
	}
	for _, r := range bad {
		if _, err := e.Generate(context.Background(), r); err == nil {
			t.Errorf("request %+v accepted", r.Sampling)
		}
	}
}

// TestCloseCancelsRunning: Close ends a running generation promptly with a
// final "cancelled", and later requests are refused.
func TestCloseCancelsRunning(t *testing.T) {
	e, err := Open(filepath.Join(testdata, "models", "text-tiny"), Options{Backend: BackendGo})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := e.Generate(context.Background(), Request{PromptIDs: []int32{2, 485}, MaxTokens: 1 << 20, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range ch {
		if ev.Kind == EventToken {
			break
		}
	}
	done := make(chan error, 1)
	go func() { done <- e.Close() }()
	var last Event
	for ev := range ch {
		last = ev
	}
	<-done
	if last.Kind != EventDone || last.StopReason != StopCancelled {
		t.Fatalf("last event after Close: %+v", last)
	}
	if _, err := e.Generate(context.Background(), Request{PromptIDs: []int32{2}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
