package chat

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"perch/app/history"
	"perch/engine"
	"perch/media/picture"
	"perch/ui"
)

// realFixture is the chat service over the real engine on the tiny fixture
// model, with one picture pool shared by the thumbnails and the engine, as
// the app wires them.
func realFixture(t *testing.T) (*Service, *Runtime) {
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
	set.MaxTokens, set.Temperature = 4, 0
	svc := New(store, rt, MediaProbe{Pictures: pool}, func() ui.Settings { return set })
	return svc, rt
}

// TestPhotoWalk follows one dropped photo from AttachFile through three
// turns of a conversation to each answer's tokens: the photo is decoded
// once for the conversation's life (the thumbnail's decode is the one the
// processor prepares it from; later turns take the prepared form from the
// processor's cache).
func TestPhotoWalk(t *testing.T) {
	svc, _ := realFixture(t)
	img, err := os.ReadFile(filepath.Join("..", "..", "testdata", "goldens", "vision-tiny", "image.png"))
	if err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "photo.png", img)
	before := picture.Decodes()
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
		r, err := svc.Send(ctx, conv, q, atts)
		if err != nil {
			t.Fatal(err)
		}
		conv = r.ConversationID
		text, last := drain(t, r)
		cancel()
		if last.State != ui.Done || last.Stats == nil || last.Stats.GeneratedTokens == 0 {
			t.Fatalf("turn %d: %+v (text %q)", turn+1, last, text)
		}
	}
	if n := picture.Decodes() - before; n != 1 {
		t.Fatalf("the photo was decoded %d times over three turns; want once", n)
	}
}
