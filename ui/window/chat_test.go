package window

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/chat"
	"perch/ui/compose"
	"perch/ui/internal/fake"
)

// renderedText collects the text a message view shows.
func renderedText(v *chat.MessageView) string {
	var b strings.Builder
	for _, o := range v.Segs {
		switch w := o.(type) {
		case *widget.RichText:
			b.WriteString(w.String())
		case *chat.CodeBlock:
			b.WriteString("[code]" + w.Code.Text + "[/code]")
		}
	}
	return b.String()
}

func lastView(h *harness) *chat.MessageView {
	vs := h.ui.Main.chat.Views
	if len(vs) == 0 {
		h.t.Fatal("no messages shown")
	}
	return vs[len(vs)-1]
}

func TestSendStreamsTextIntoMessageRow(t *testing.T) {
	h := newHarness(t, fake.Script{Every: time.Millisecond, Deltas: append(
		[]fake.Delta{{Status: "Loading model…"}, {Thinking: "The user greets me."}},
		fake.Words("Hello", " **there**", ".\n\n", "```go\n", "fmt.Println(1)\n", "```\n", "Bye.")...)})
	mw := h.ui.Main
	entry := mw.chat.Comp.Entry
	test.Type(entry, "Hi Gemma")
	entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})

	if !mw.Busy() {
		t.Fatal("Enter did not start an answer")
	}
	if entry.Text != "" {
		t.Fatalf("entry not cleared after send: %q", entry.Text)
	}
	if got := mw.chat.Views[0].Msg; got.Role != ui.User || got.Text != "Hi Gemma" {
		t.Fatalf("first row = %+v", got)
	}
	h.loop.Until(t, "answer to finish", func() bool { return !mw.Busy() })
	v := lastView(h)
	if got := renderedText(v); !strings.Contains(got, "Hello there.") || !strings.Contains(got, "[code]fmt.Println(1)[/code]") ||
		!strings.HasSuffix(got, "Bye.") {
		t.Fatalf("rendered answer = %q", got)
	}
	if v.Think.Hidden || v.ThinkTx.Text != "The user greets me." || v.Think.Items[0].Title != "Thoughts" {
		t.Fatalf("thoughts: hidden=%v text=%q title=%q", v.Think.Hidden, v.ThinkTx.Text, v.Think.Items[0].Title)
	}
	if v.Think.Items[0].Open {
		t.Fatal("Thoughts should start collapsed")
	}
	if want := "12 tokens · 31.5 tok/s · 240 ms to first token"; v.Stats.Text != want {
		t.Fatalf("stats = %q, want %q", v.Stats.Text, want)
	}
	if !v.Status.Hidden {
		t.Fatalf("status still shown: %q", v.Status.Text)
	}
	// The conversation appeared in the list, selected.
	if len(mw.side.items) != 1 || mw.side.selected != mw.chat.ConvID || mw.title.Text != "Hi Gemma" {
		t.Fatalf("sidebar = %+v selected %q title %q", mw.side.items, mw.side.selected, mw.title.Text)
	}
	// Copy puts the Markdown source on the clipboard; code blocks copy alone.
	test.Tap(actionButton(v.Actions.Objects[0]))
	if got := h.app.Clipboard().Content(); got != v.Msg.Text || !strings.Contains(got, "**there**") {
		t.Fatalf("copied %q", got)
	}
	for _, o := range v.Segs {
		if cb, ok := o.(*chat.CodeBlock); ok {
			test.Tap(cb.Copy)
		}
	}
	if got := h.app.Clipboard().Content(); got != "fmt.Println(1)" {
		t.Fatalf("code block copied %q", got)
	}
}

func TestStopCancelsAndKeepsPartialAnswer(t *testing.T) {
	h := newHarness(t, fake.Script{Every: 2 * time.Millisecond, Forever: "la "})
	mw := h.ui.Main
	mw.SetDraft("Sing")
	mw.Submit()
	h.loop.Until(t, "some text", func() bool { return strings.Count(lastView(h).Msg.Text, "la") >= 3 })
	stop := mw.chat.Comp.Stop
	if stop.Hidden || !mw.chat.Comp.Send.Hidden {
		t.Fatal("Stop should replace Send while streaming")
	}
	// The row's own Stop button.
	rowStop := actionButton(lastView(h).Actions.Objects[0])
	if rowStop.Text != "Stop" {
		t.Fatalf("row action = %q", rowStop.Text)
	}
	test.Tap(stop)
	select {
	case <-h.chat.SawStop:
	case <-time.After(5 * time.Second):
		t.Fatal("the generation's context was not cancelled")
	}
	h.loop.Until(t, "stopped", func() bool { return !mw.Busy() })
	v := lastView(h)
	if v.Msg.State != ui.Stopped || !strings.HasPrefix(v.Msg.Text, "la la la") {
		t.Fatalf("after stop: state %q text %q", v.Msg.State, v.Msg.Text)
	}
	if len(v.Note.Objects) == 0 {
		t.Fatal("no 'Stopped' note")
	}
	if mw.chat.Comp.Send.Hidden {
		t.Fatal("Send not back after stop")
	}
}

// versionSwitch returns the ◀ and ▶ buttons under an answer and the "n / m" caption.
func versionSwitch(t *testing.T, v *chat.MessageView) (prev, next *widget.Button, label string) {
	t.Helper()
	for _, o := range v.Actions.Objects {
		if c, ok := o.(*fyne.Container); ok && len(c.Objects) == 3 {
			prev, next = c.Objects[0].(*widget.Button), c.Objects[2].(*widget.Button)
			label = c.Objects[1].(*fyne.Container).Objects[0].(*canvas.Text).Text
			return
		}
	}
	return nil, nil, ""
}

func TestRegenerateKeepsVersionsToSwitchBetween(t *testing.T) {
	h := newHarness(t,
		fake.Script{Deltas: fake.Words("First answer.")},
		fake.Script{Deltas: fake.Words("Second answer.")})
	mw := h.ui.Main
	mw.SetDraft("Q")
	mw.Submit()
	h.loop.Until(t, "first answer", func() bool { return !mw.Busy() })
	first := lastView(h)
	if p, _, _ := versionSwitch(t, first); p != nil {
		t.Fatal("a single answer shows ◀ ▶")
	}
	test.Tap(actionButton(first.Actions.Objects[1])) // regenerate
	h.loop.Until(t, "second answer", func() bool { return !mw.Busy() && renderedText(lastView(h)) == "Second answer." })
	if n := len(mw.chat.Views); n != 2 || lastView(h) != first || len(mw.chat.List.Objects) != 2 {
		t.Fatalf("%d rows after regenerate, want the question and the same answer row", n)
	}
	prev, next, label := versionSwitch(t, first)
	if prev == nil || label != "2 / 2" || prev.Disabled() || !next.Disabled() {
		t.Fatalf("after regenerate: switch %v %q", prev != nil, label)
	}
	test.Tap(prev) // ◀
	h.loop.Drain()
	prev, next, label = versionSwitch(t, first)
	if got := renderedText(first); got != "First answer." || label != "1 / 2" || !prev.Disabled() || next.Disabled() {
		t.Fatalf("after ◀: %q, %q", got, label)
	}
	test.Tap(next) // ▶
	if got := renderedText(first); got != "Second answer." {
		t.Fatalf("after ▶: %q", got)
	}
	if strings.Join(h.chat.Calls[1:], ",") != "regenerate:"+first.Msg.ID+",useVersion:1,useVersion:2" {
		t.Fatalf("calls = %v", h.chat.Calls)
	}
}

func TestEditBoxSendsWithEnterLikeTheComposer(t *testing.T) {
	h := newHarness(t, fake.Script{Deltas: fake.Words("A1")}, fake.Script{Deltas: fake.Words("A2")})
	mw := h.ui.Main
	mw.SetDraft("What is 2+2?")
	mw.Submit()
	h.loop.Until(t, "answer", func() bool { return !mw.Busy() })
	user := mw.chat.Views[0]
	test.Tap(actionButton(user.Actions.Objects[1])) // edit
	if !user.Editing || mw.Window.Canvas().Focused() != user.EditEntry {
		t.Fatal("edit did not open with the cursor in it")
	}
	e := user.EditEntry
	e.SetText("")
	test.Type(e, "What is 3+3?")
	e.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn}) // Shift+Enter: a new line
	e.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(e, "Thanks")
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn}) // Enter: send
	h.loop.Until(t, "new answer", func() bool { return !mw.Busy() && len(mw.chat.Views) == 2 && lastView(h).Msg.Text == "A2" })
	if got := mw.chat.Views[0].Msg.Text; got != "What is 3+3?\nThanks" {
		t.Fatalf("user turn = %q", got)
	}
	if h.chat.Calls[1] != "edit:What is 3+3?\nThanks" {
		t.Fatalf("calls = %v", h.chat.Calls)
	}
	// Esc leaves the edit box without sending.
	user = mw.chat.Views[0]
	test.Tap(actionButton(user.Actions.Objects[1]))
	user.EditEntry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if user.Editing || len(h.chat.Calls) != 2 {
		t.Fatalf("Esc: editing %v, calls %v", user.Editing, h.chat.Calls)
	}
}

func writeFile(t *testing.T, name string, data []byte) fyne.URI {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return storage.NewFileURI(p)
}

func TestDroppedFilesBecomeChips(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	mw.Drop([]fyne.URI{
		writeFile(t, "robin.png", []byte("\x89PNG\r\n\x1a\n")),
		writeFile(t, "song.wav", []byte("RIFF\x00\x00\x00\x00WAVE")),
		writeFile(t, "clip.mp4", []byte("\x00\x00\x00\x18ftypmp42")),
	})
	h.loop.Until(t, "three chips", func() bool { return mw.PendingAttachments() == 3 })
	kinds := map[ui.MediaKind]string{}
	for _, o := range mw.chat.Comp.Chips.Objects {
		c := o.(*compose.Chip)
		kinds[c.Att.Kind] = compose.ChipDetail(c.Att)
		if c.Remove == nil {
			t.Fatal("composer chip without a remove button")
		}
	}
	want := map[ui.MediaKind]string{ui.Image: "Image · 640×480", ui.Audio: "Audio · 0:02", ui.Video: "Video · 1:15"}
	for k, d := range want {
		if kinds[k] != d {
			t.Errorf("%s chip detail = %q, want %q", k, kinds[k], d)
		}
	}
	// × removes one chip.
	test.Tap(mw.chat.Comp.Chips.Objects[1].(*compose.Chip).Remove)
	if mw.PendingAttachments() != 2 || mw.chat.Comp.Pending[1].Kind != ui.Video {
		t.Fatalf("after remove: %+v", mw.chat.Comp.Pending)
	}
	// Attachments go out with the message and show in its row.
	mw.SetDraft("What is in these?")
	mw.Submit()
	if mw.PendingAttachments() != 0 || len(mw.chat.Views[0].Msg.Attachments) != 2 {
		t.Fatalf("sent attachments: %d pending, %d on the message", mw.PendingAttachments(), len(mw.chat.Views[0].Msg.Attachments))
	}
	h.loop.Until(t, "answer", func() bool { return !mw.Busy() })
}

func TestUnsupportedFileIsRefused(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	mw.Drop([]fyne.URI{writeFile(t, "notes.txt", []byte("hello"))})
	h.loop.Until(t, "refusal", func() bool { return mw.Notice() != "" })
	if mw.PendingAttachments() != 0 {
		t.Fatal("refused file became a chip")
	}
	if !strings.Contains(mw.Notice(), "notes.txt is not a photo, sound or video") || mw.chat.Comp.Notice.Hidden {
		t.Fatalf("notice = %q (hidden %v)", mw.Notice(), mw.chat.Comp.Notice.Hidden)
	}
	// Pasting a file path attaches it like a drop.
	png := writeFile(t, "pasted.png", []byte("\x89PNG"))
	h.app.Clipboard().SetContent(png.String())
	mw.chat.Comp.Entry.TypedShortcut(&fyne.ShortcutPaste{Clipboard: h.app.Clipboard()})
	h.loop.Until(t, "pasted chip", func() bool { return mw.PendingAttachments() == 1 })
	if mw.chat.Comp.Entry.Text != "" {
		t.Fatalf("path was typed too: %q", mw.chat.Comp.Entry.Text)
	}
	if !mw.chat.Comp.Notice.Hidden {
		t.Fatal("refusal still shown after a good attachment")
	}
}

// The first drop's chips are laid out when they arrive, not at the next
// pointer move (the composer grows at once).
func TestFirstDropShowsChipsAtOnce(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	mw.Drop([]fyne.URI{writeFile(t, "robin.png", []byte("png"))})
	h.loop.Until(t, "chip", func() bool { return mw.PendingAttachments() == 1 })
	c := mw.chat.Comp
	row := c.Stack.Objects[1]
	if c.ChipRow.Size().Height == 0 || row.Position().Y < c.ChipRow.Size().Height {
		t.Fatalf("chips at %v size %v, input row at %v: not laid out", c.ChipRow.Position(), c.ChipRow.Size(), row.Position())
	}
	c.RemoveAt(0)
	if row.Position().Y != 0 {
		t.Fatalf("after removing the chip the input row stays at %v", row.Position())
	}
}
