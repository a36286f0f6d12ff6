package chat

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"perch/app/history"
	"perch/engine"
	"perch/ui"
)

// fakeEngine answers every request with tokens, one every `every`, and
// records the requests it saw.
type fakeEngine struct {
	mu       sync.Mutex
	tokens   []engine.Token
	every    time.Duration
	forever  bool // keep sending "x " until cancelled
	err      error
	midErr   error         // sent as an Error event after the tokens
	gate     chan struct{} // non-nil: the first token waits until it is closed
	requests []engine.Request
	closed   bool
	// call, when set, is what the model does while tools are offered and
	// not refused (tool choice not "none"): it calls instead of answering,
	// once (the round after a tool turn answers), or every round (callAlways).
	call       *engine.ParsedCall
	callAlways bool
}

// calls reports whether the fake calls a tool for req.
func (f *fakeEngine) calls(req engine.Request) bool {
	if f.call == nil || len(req.Tools) == 0 || req.ToolChoice.Mode == engine.ToolNone {
		return false
	}
	last := req.Messages[len(req.Messages)-1]
	return f.callAlways || last.Role != engine.RoleTool
}

// fitRequest applies req's context policy as the engine's Generate does,
// with measure standing in for its Prepare.
func fitRequest(req engine.Request, measure func(engine.Request) engine.Measure) (engine.Request, error) {
	for req.Fit != nil {
		next, done, err := req.Fit.Fit(req.Messages, measure(req))
		if err != nil || done {
			return req, err
		}
		req.Messages = next
	}
	return req, nil
}

func (f *fakeEngine) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	req, err := fitRequest(req, func(r engine.Request) engine.Measure { m, _ := f.Measure(ctx, r); return m })
	done := func() {
		if req.OnDone != nil {
			req.OnDone()
		}
	}
	if err != nil {
		done()
		return nil, err
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	err = f.err
	f.mu.Unlock()
	if err != nil {
		done()
		return nil, err
	}
	ch := make(chan engine.Event)
	go func() {
		defer done()
		defer close(ch)
		send := func(ev engine.Event) bool {
			select {
			case ch <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		n := 0
		ok := send(engine.Event{Kind: engine.EventQueued, Position: 0})
		if ok && f.calls(req) {
			if send(engine.Event{Kind: engine.EventToolCall, Call: *f.call}) {
				ch <- engine.Event{Kind: engine.EventDone, StopReason: engine.StopToolCalls, Stats: &engine.Stats{GeneratedTokens: 5}}
			}
			return
		}
		if f.gate != nil {
			select {
			case <-f.gate:
			case <-ctx.Done():
				ok = false
			}
		}
		for i := 0; ok && (i < len(f.tokens) || f.forever); i++ {
			tok := engine.Token{Text: "x "}
			if i < len(f.tokens) {
				tok = f.tokens[i]
			}
			ok = send(engine.Event{Kind: engine.EventToken, Token: tok})
			n++
			time.Sleep(f.every)
		}
		if !ok {
			ch <- engine.Event{Kind: engine.EventDone, StopReason: engine.StopCancelled, Stats: &engine.Stats{GeneratedTokens: n}}
			return
		}
		if f.midErr != nil {
			ch <- engine.Event{Kind: engine.EventError, Err: f.midErr}
			return
		}
		ch <- engine.Event{Kind: engine.EventDone, StopReason: engine.StopEOS,
			Stats: &engine.Stats{PromptTokens: 17, GeneratedTokens: n, TimeToFirst: 120 * time.Millisecond, DecodeTokS: 42.5}}
	}()
	return ch, nil
}

func (f *fakeEngine) Close() error { f.mu.Lock(); f.closed = true; f.mu.Unlock(); return nil }

// Measure says every prompt fits: a token a message in a large context.
func (f *fakeEngine) Measure(_ context.Context, req engine.Request) (engine.Measure, error) {
	return engine.Measure{Tokens: len(req.Messages), Context: 1 << 20}, nil
}

func (f *fakeEngine) Train(context.Context, engine.TrainRequest) (*engine.TrainRun, error) {
	return nil, errors.New("the fake engine does not train")
}

func (f *fakeEngine) lastRequest() engine.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1]
}

func toks(words ...string) []engine.Token {
	var t []engine.Token
	for _, w := range words {
		t = append(t, engine.Token{Text: w})
	}
	return t
}

// newRuntime returns a runtime whose every load opens eng.
func newRuntime(eng *fakeEngine, caps Located) (*Runtime, *int) {
	loads := 0
	r := NewRuntime(func(id string) (Located, error) {
		return caps, nil
	}, func(dir string) (Engine, engine.ModelInfo, error) {
		loads++
		return eng, engine.ModelInfo{Name: caps.Name, Vision: caps.Vision, Audio: caps.Audio, Video: caps.Video}, nil
	}, nil)
	return r, &loads
}

var e2b = Located{Dir: "/models/e2b", Name: "Gemma-4 E2B", Vision: true, Audio: true, Video: true}

type fixture struct {
	store *history.Store
	eng   *fakeEngine
	rt    *Runtime
	svc   *Service
	set   ui.Settings
}

func newFixture(t *testing.T, eng *fakeEngine, caps Located) *fixture {
	t.Helper()
	store, _, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	rt, _ := newRuntime(eng, caps)
	if err := rt.Select("e2b"); err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: store, eng: eng, rt: rt, set: ui.DefaultSettings()}
	f.svc = New(store, rt, MediaProbe{}, func() ui.Settings { return f.set })
	f.svc.SaveEvery = 5 * time.Millisecond
	return f
}

// answers follows a reply's stream answer by answer (applied inline, the
// test's stand-in for the UI goroutine); the channel closes after the Done one.
func answers(r ui.Reply) <-chan ui.Answer {
	ch := make(chan ui.Answer, 1024)
	r.Stream.Follow(func(f func()) { f() }, func(a ui.Answer) {
		ch <- a
		if a.Done {
			close(ch)
		}
	})
	return ch
}

// drain follows a stream to its end and returns the text and the final answer.
func drain(t *testing.T, r ui.Reply) (string, ui.Answer) {
	t.Helper()
	return drainAnswers(t, answers(r))
}

func drainAnswers(t *testing.T, ch <-chan ui.Answer) (string, ui.Answer) {
	t.Helper()
	var last ui.Answer
	timeout := time.After(10 * time.Second)
	for {
		select {
		case a, ok := <-ch:
			if !ok {
				return last.Text, last
			}
			last = a
		case <-timeout:
			t.Fatal("stream did not finish")
		}
	}
}

// Media made in the test: a PNG, a 2 s PCM16 WAV, an MP4 header.

func pngBytes(t *testing.T, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.NRGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func wavBytes(seconds float64, rate int) []byte {
	n := int(seconds * float64(rate))
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + 2*n))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))
	w(uint16(1))
	w(uint32(rate))
	w(uint32(rate * 2))
	w(uint16(2))
	w(uint16(16))
	b.WriteString("data")
	w(uint32(2 * n))
	for i := 0; i < n; i++ {
		w(int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate))))
	}
	return b.Bytes()
}

func mp4Bytes() []byte {
	return append([]byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41"), make([]byte, 64)...)
}

func writeTemp(t *testing.T, name string, data []byte) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
