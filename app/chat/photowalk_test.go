package chat

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"perch/app/history"
	"perch/engine"
	"perch/engine/gemma4/processor"
	"perch/internal/contenthash"
	"perch/media/lru"
	"perch/media/picture"
	"perch/ui"
)

// gated hands out the runtime's model with each request parked on the
// engine thread after its prefill until the test lets it go, so the test can
// see every goroutine the answer's path holds.
type gated struct {
	*Runtime
	parked, resume chan struct{}
}

func (g *gated) Acquire(ctx context.Context, status func(string)) (Lent, error) {
	gen, err := g.Runtime.Acquire(ctx, status)
	if err != nil {
		return nil, err
	}
	return gatedGen{gen, g}, nil
}

type gatedGen struct {
	Lent
	g *gated
}

func (gg gatedGen) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	if parked, resume := gg.g.parked, gg.g.resume; parked != nil {
		req.DumpLogits = func([]float32) { // runs on the engine thread, before the first token
			parked <- struct{}{}
			<-resume
		}
	}
	return gg.Lent.Generate(ctx, req)
}

// answerPath lists the goroutines that carry an answer (the engine's worker, the
// app's and the UI's own) and how many of them wait on a channel for it.
func answerPath(t *testing.T) (goroutines []string, waiting int) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 {
			continue // this goroutine
		}
		head, stack, _ := strings.Cut(g, "\n")
		var name string
		for _, line := range strings.Split(stack, "\n") {
			fn := funcName(line)
			if strings.HasPrefix(fn, "perch/") && !strings.Contains(fn, ".Test") && !strings.Contains(fn, "gatedGen") &&
				!strings.HasPrefix(fn, "perch/engine/") && !strings.HasPrefix(fn, "perch/media/") {
				name = fn // the outermost perch frame: what the goroutine is for
			}
		}
		if name == "" {
			continue
		}
		goroutines = append(goroutines, name+" "+strings.TrimSuffix(strings.TrimPrefix(head, "goroutine "), ":"))
		if !strings.Contains(name, "worker") && (strings.Contains(head, "[chan receive") || strings.Contains(head, "[select")) {
			waiting++
		}
	}
	return goroutines, waiting
}

// realFixture is the chat service over the real engine on the tiny fixture
// model, with one picture pool shared by the thumbnails and the engine, as
// the app wires them.
func realFixture(t *testing.T) (*Service, *gated) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "models", "text-tiny"))
	if err != nil {
		t.Fatal(err)
	}
	store, _, err := history.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	pool := picture.NewPool(picture.PoolOptions{})
	rt := NewRuntime(func(string) (Located, error) {
		return Located{Dir: dir, Name: "tiny", Vision: true, Audio: true, Video: true}, nil
	}, func(dir string) (Engine, engine.ModelInfo, error) {
		e, err := engine.Open(dir, engine.Options{Backend: engine.BackendGo, Pictures: pool})
		if err != nil {
			return nil, engine.ModelInfo{}, err
		}
		return e, e.Info(), nil
	}, nil)
	t.Cleanup(rt.Close)
	if err := rt.Select("tiny"); err != nil {
		t.Fatal(err)
	}
	set := ui.DefaultSettings()
	set.MaxTokens, set.Sampling.Temperature = ui.Ptr(4), ui.Ptr[float32](0)
	g := &gated{Runtime: rt}
	svc := New(store, g, MediaProbe{Pictures: pool}, func() ui.Settings { return set })
	return svc, g
}

// TestPhotoWalk follows one dropped photo from AttachFile through three
// turns of a conversation to each answer's first token as the view gets it:
//   - the photo is decoded once for the conversation's life (the
//     thumbnail's decode is the one the processor prepares it from; later
//     turns take the prepared form from the processor's cache);
//   - a token crosses two goroutines and one channel: the engine's worker
//     sends it to the chat service's goroutine, which collects it and posts
//     the answer so far to the UI goroutine (fyne.Do; here, inline), at
//     most once a frame (a refresh due later is posted by a frame timer);
//   - each send prepares its prompt once (render, tokenise, media: the
//     context policy is applied inside that one Prepare);
//   - the photo is hashed once for the conversation (when attached: the
//     hash travels with it to the blob store, the picture pool and the
//     processor) and its bytes come from disk at most once per conversation
//     (none while the attached bytes are held; once after a restart).
func TestPhotoWalk(t *testing.T) {
	svc, g := realFixture(t)
	img, err := os.ReadFile(filepath.Join("..", "..", "testdata", "goldens", "vision-tiny", "image.png"))
	if err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "photo.png", img)
	before := picture.Decodes()
	hashes, reads := contenthash.Count(), svc.blobReads.Load()
	att, err := svc.AttachFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if att.Thumb == nil || att.Width == 0 {
		t.Fatalf("attachment without thumbnail or size: %+v", att)
	}
	conv := ""
	for turn, q := range []string{"What is this?", "And the colours?", "Thanks. One more look?"} {
		var atts []ui.Attachment
		if turn == 0 {
			atts = []ui.Attachment{att}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if turn == 0 {
			g.parked, g.resume = make(chan struct{}), make(chan struct{})
		}
		prepares := processor.Prepares()
		r, err := svc.Send(ctx, conv, q, atts)
		if err != nil {
			t.Fatal(err)
		}
		conv = r.ConversationID
		var ch <-chan ui.Answer
		var viewG string
		if turn == 0 {
			seen := make(chan ui.Answer, 1024)
			r.Stream.Follow(func(f func()) { f() }, func(a ui.Answer) {
				if viewG == "" && a.Text != "" {
					viewG = goroutineOf()
				}
				seen <- a
				if a.Done {
					close(seen)
				}
			})
			ch = seen
			<-g.parked // the engine has prefilled; the path is laid, no token yet
			// The service may still be taking the events sent so far (queued,
			// encoding, prefill), and the runtime's one-off notifier of the
			// model's state (Runtime.tell) may not have returned yet: look once
			// the service waits for more and the short-lived ones are gone (a
			// goroutine that stays on the path stays past the deadline).
			gs, waiting := answerPath(t)
			for deadline := time.Now().Add(5 * time.Second); (waiting == 0 || len(gs) > 2) && time.Now().Before(deadline); gs, waiting = answerPath(t) {
				time.Sleep(time.Millisecond)
			}
			t.Logf("a token's path: %d goroutines %v, %d of them waiting on a channel for it", len(gs), gs, waiting)
			if len(gs) != 2 || waiting != 1 {
				t.Errorf("the path holds %d goroutines (%v), %d waiting on channels; want the engine worker and the service, one channel",
					len(gs), gs, waiting)
			}
			close(g.resume)
			g.parked = nil
		} else {
			ch = answers(r)
		}
		text, last := drainAnswers(t, ch)
		cancel()
		// The service posts the answer so far itself, unless a refresh went
		// out less than a frame before: then the stream's frame timer posts it
		// (time.AfterFunc, no goroutine of ours waiting). Anything else is a
		// forwarding goroutine the path must not have.
		if turn == 0 && !strings.Contains(viewG, "chat.(*Service).run") && !strings.Contains(viewG, "ui.(*Stream).scheduleLocked") {
			t.Errorf("the first token reached the view on %q, neither the service's goroutine nor the stream's frame timer", viewG)
		}
		if last.State != ui.Done || last.Stats == nil || last.Stats.GeneratedTokens == 0 {
			t.Fatalf("turn %d: %+v (text %q)", turn+1, last, text)
		}
		if n := processor.Prepares() - prepares; n != 1 {
			t.Errorf("turn %d prepared its prompt %d times; want once", turn+1, n)
		}
	}
	h, rd := contenthash.Count()-hashes, svc.blobReads.Load()-reads
	t.Logf("over three turns the photo was hashed %d time(s) and read from disk %d time(s)", h, rd)
	if h != 1 || rd != 0 {
		t.Errorf("the photo was hashed %d times and read from disk %d times over three turns; want 1 and 0", h, rd)
	}
	// Perch starts again (its attachment bytes gone): two more turns read
	// the photo from disk once, checked against its hash once.
	svc.attachments = lru.New[[]byte](attachmentCacheBytes, nil)
	hashes, reads = contenthash.Count(), svc.blobReads.Load()
	for _, q := range []string{"Back again: what was it?", "And its size?"} {
		prepares := processor.Prepares()
		r, err := svc.Send(context.Background(), conv, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, last := drainAnswers(t, answers(r)); last.State != ui.Done {
			t.Fatalf("after the restart: %+v", last)
		}
		if n := processor.Prepares() - prepares; n != 1 {
			t.Errorf("a turn after the restart prepared its prompt %d times; want once", n)
		}
	}
	if h, rd := contenthash.Count()-hashes, svc.blobReads.Load()-reads; h != 1 || rd != 1 {
		t.Errorf("after a restart, two turns hashed the photo %d times and read it %d times; want 1 and 1", h, rd)
	}
	n := picture.Decodes() - before
	t.Logf("the photo was decoded %d time(s) over three turns", n)
	if n != 1 {
		t.Fatalf("the photo was decoded %d times over three turns; want once", n)
	}
}

// goroutineOf names the outermost perch function of the calling goroutine.
func goroutineOf() string {
	buf := make([]byte, 1<<16)
	buf = buf[:runtime.Stack(buf, false)]
	name := ""
	for _, line := range strings.Split(string(buf), "\n") {
		if fn := funcName(line); strings.HasPrefix(fn, "perch/") {
			name = fn
		}
	}
	return name
}

// funcName is the function of a stack trace line, without its arguments.
func funcName(line string) string {
	line = strings.TrimSpace(line)
	if i := strings.LastIndex(line, "("); i > 0 && strings.HasSuffix(line, ")") {
		return line[:i]
	}
	return ""
}
