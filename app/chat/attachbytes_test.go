package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"perch/ui"
)

// A conversation's photo is read from disk once: the next turns resend it
// from memory, so they still work with its file gone, where a service
// that has not read it yet fails.
func TestAttachmentBytesReadOncePerConversation(t *testing.T) {
	eng := &fakeEngine{tokens: toks("ok")}
	f := newFixture(t, eng, e2b)
	png := pngBytes(t, 40, 30)
	att, err := f.svc.AttachFile(writeTemp(t, "dot.png", png))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := f.svc.Send(context.Background(), "", "What is this?", []ui.Attachment{att})
	if _, last := drain(t, r); last.State != ui.Done {
		t.Fatalf("first turn: %s %v", last.State, last.Err)
	}
	sum := sha256.Sum256(png)
	if err := os.Remove(f.store.BlobPath(hex.EncodeToString(sum[:]))); err != nil {
		t.Fatal(err)
	}

	r2, _ := f.svc.Send(context.Background(), r.ConversationID, "And now?", nil)
	if _, last := drain(t, r2); last.State != ui.Done {
		t.Fatalf("second turn re-read the photo from disk: %s %v", last.State, last.Err)
	}
	if got := eng.lastRequest().Messages[0].Content[0].Data; string(got) != string(png) {
		t.Fatalf("second turn sent %d bytes of photo, want the %d attached", len(got), len(png))
	}

	fresh := New(f.store, f.rt, MediaProbe{}, func() ui.Settings { return f.set })
	r3, _ := fresh.Send(context.Background(), r.ConversationID, "Still there?", nil)
	if _, last := drain(t, r3); last.State != ui.Failed {
		t.Fatalf("a service that never read the photo answered without its file: %s", last.State)
	}
}
