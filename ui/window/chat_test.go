package window

import (
	"perch/ui"
	"perch/ui/look"

	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// renderedText collects the text a message view shows.
func renderedText(v *messageView) string {
	var b strings.Builder
	for _, o := range v.segs {
		switch w := o.(type) {
		case *widget.RichText:
			b.WriteString(w.String())
		case *codeBlock:
			b.WriteString("[code]" + w.code.Text + "[/code]")
		}
	}
	return b.String()
}

func lastView(h *harness) *messageView {
	vs := h.ui.Main.chat.views
	if len(vs) == 0 {
		h.t.Fatal("no messages shown")
	}
	return vs[len(vs)-1]
}

func TestSendStreamsTextIntoMessageRow(t *testing.T) {
	h := newHarness(t, script{every: time.Millisecond, deltas: append(
		[]Delta{{Status: "Loading model…"}, {Thinking: "The user greets me."}},
		words("Hello", " **there**", ".\n\n", "```go\n", "fmt.Println(1)\n", "```\n", "Bye.")...)})
	mw := h.ui.Main
	entry := mw.chat.comp.entry
	test.Type(entry, "Hi Gemma")
	entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})

	if !mw.Busy() {
		t.Fatal("Enter did not start an answer")
	}
	if entry.Text != "" {
		t.Fatalf("entry not cleared after send: %q", entry.Text)
	}
	if got := mw.chat.views[0].msg; got.Role != ui.User || got.Text != "Hi Gemma" {
		t.Fatalf("first row = %+v", got)
	}
	h.loop.until(t, "answer to finish", func() bool { return !mw.Busy() })
	v := lastView(h)
	if got := renderedText(v); !strings.Contains(got, "Hello there.") || !strings.Contains(got, "[code]fmt.Println(1)[/code]") ||
		!strings.HasSuffix(got, "Bye.") {
		t.Fatalf("rendered answer = %q", got)
	}
	if v.think.Hidden || v.thinkTx.Text != "The user greets me." || v.think.Items[0].Title != "Thoughts" {
		t.Fatalf("thoughts: hidden=%v text=%q title=%q", v.think.Hidden, v.thinkTx.Text, v.think.Items[0].Title)
	}
	if v.think.Items[0].Open {
		t.Fatal("Thoughts should start collapsed")
	}
	if want := "12 tokens · 31.5 tok/s · 240 ms to first token"; v.stats.Text != want {
		t.Fatalf("stats = %q, want %q", v.stats.Text, want)
	}
	if !v.status.Hidden {
		t.Fatalf("status still shown: %q", v.status.Text)
	}
	// The conversation appeared in the list, selected.
	if len(mw.side.items) != 1 || mw.side.selected != mw.chat.convID || mw.title.Text != "Hi Gemma" {
		t.Fatalf("sidebar = %+v selected %q title %q", mw.side.items, mw.side.selected, mw.title.Text)
	}
	// Copy puts the Markdown source on the clipboard; code blocks copy alone.
	test.Tap(actionButton(v.actions.Objects[0]))
	if got := h.app.Clipboard().Content(); got != v.msg.Text || !strings.Contains(got, "**there**") {
		t.Fatalf("copied %q", got)
	}
	for _, o := range v.segs {
		if cb, ok := o.(*codeBlock); ok {
			test.Tap(cb.copy)
		}
	}
	if got := h.app.Clipboard().Content(); got != "fmt.Println(1)" {
		t.Fatalf("code block copied %q", got)
	}
}

// TestStreamingRefreshesAreCoalesced: 5000 answers published as fast as
// they come reach the view as a few refreshes, never two posted at once,
// the last with Done and the whole text.
func TestStreamingRefreshesAreCoalesced(t *testing.T) {
	l := newLoop()
	var posted, maxPosted atomic.Int32
	do := func(f func()) {
		if n := posted.Add(1); n > maxPosted.Load() {
			maxPosted.Store(n)
		}
		l.do(func() { posted.Add(-1); f() })
	}
	st := ui.NewStream()
	applies := 0
	var last ui.Answer
	st.Follow(do, func(a ui.Answer) { applies++; last = a })
	go func() {
		text := ""
		for i := 0; i < 5000; i++ {
			text += "x"
			st.Publish(ui.Answer{Text: text})
		}
		st.Publish(ui.Answer{Text: text, Done: true})
		st.Publish(ui.Answer{Text: "after the end"}) // ignored
	}()
	l.until(t, "stream end", func() bool { return last.Done })
	if len(last.Text) != 5000 || last.State != ui.Done {
		t.Fatalf("final = %d chars, state %q", len(last.Text), last.State)
	}
	// 5000 tokens must not mean 5000 re-renders.
	if applies > 200 || maxPosted.Load() > 1 {
		t.Fatalf("%d refreshes for 5000 tokens, up to %d posted at once", applies, maxPosted.Load())
	}
	t.Logf("%d refreshes for 5000 tokens", applies)
}

func TestStopCancelsAndKeepsPartialAnswer(t *testing.T) {
	h := newHarness(t, script{every: 2 * time.Millisecond, forever: "la "})
	mw := h.ui.Main
	mw.SetDraft("Sing")
	mw.Submit()
	h.loop.until(t, "some text", func() bool { return strings.Count(lastView(h).msg.Text, "la") >= 3 })
	stop := mw.chat.comp.stop
	if stop.Hidden || !mw.chat.comp.send.Hidden {
		t.Fatal("Stop should replace Send while streaming")
	}
	// The row's own Stop button.
	rowStop := actionButton(lastView(h).actions.Objects[0])
	if rowStop.Text != "Stop" {
		t.Fatalf("row action = %q", rowStop.Text)
	}
	test.Tap(stop)
	select {
	case <-h.chat.sawStop:
	case <-time.After(5 * time.Second):
		t.Fatal("the generation's context was not cancelled")
	}
	h.loop.until(t, "stopped", func() bool { return !mw.Busy() })
	v := lastView(h)
	if v.msg.State != ui.Stopped || !strings.HasPrefix(v.msg.Text, "la la la") {
		t.Fatalf("after stop: state %q text %q", v.msg.State, v.msg.Text)
	}
	if len(v.note.Objects) == 0 {
		t.Fatal("no 'Stopped' note")
	}
	if mw.chat.comp.send.Hidden {
		t.Fatal("Send not back after stop")
	}
}

// versionSwitch returns the ◀ and ▶ buttons under an answer and the "n / m" caption.
func versionSwitch(t *testing.T, v *messageView) (prev, next *widget.Button, label string) {
	t.Helper()
	for _, o := range v.actions.Objects {
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
		script{deltas: words("First answer.")},
		script{deltas: words("Second answer.")})
	mw := h.ui.Main
	mw.SetDraft("Q")
	mw.Submit()
	h.loop.until(t, "first answer", func() bool { return !mw.Busy() })
	first := lastView(h)
	if p, _, _ := versionSwitch(t, first); p != nil {
		t.Fatal("a single answer shows ◀ ▶")
	}
	test.Tap(actionButton(first.actions.Objects[1])) // regenerate
	h.loop.until(t, "second answer", func() bool { return !mw.Busy() && renderedText(lastView(h)) == "Second answer." })
	if n := len(mw.chat.views); n != 2 || lastView(h) != first || len(mw.chat.list.Objects) != 2 {
		t.Fatalf("%d rows after regenerate, want the question and the same answer row", n)
	}
	prev, next, label := versionSwitch(t, first)
	if prev == nil || label != "2 / 2" || prev.Disabled() || !next.Disabled() {
		t.Fatalf("after regenerate: switch %v %q", prev != nil, label)
	}
	test.Tap(prev) // ◀
	h.loop.drain()
	prev, next, label = versionSwitch(t, first)
	if got := renderedText(first); got != "First answer." || label != "1 / 2" || !prev.Disabled() || next.Disabled() {
		t.Fatalf("after ◀: %q, %q", got, label)
	}
	test.Tap(next) // ▶
	if got := renderedText(first); got != "Second answer." {
		t.Fatalf("after ▶: %q", got)
	}
	if strings.Join(h.chat.calls[1:], ",") != "regenerate:"+first.msg.ID+",useVersion:1,useVersion:2" {
		t.Fatalf("calls = %v", h.chat.calls)
	}
}

func TestEditBoxSendsWithEnterLikeTheComposer(t *testing.T) {
	h := newHarness(t, script{deltas: words("A1")}, script{deltas: words("A2")})
	mw := h.ui.Main
	mw.SetDraft("What is 2+2?")
	mw.Submit()
	h.loop.until(t, "answer", func() bool { return !mw.Busy() })
	user := mw.chat.views[0]
	test.Tap(actionButton(user.actions.Objects[1])) // edit
	if !user.editing || mw.Window.Canvas().Focused() != user.editEntry {
		t.Fatal("edit did not open with the cursor in it")
	}
	e := user.editEntry
	e.SetText("")
	test.Type(e, "What is 3+3?")
	e.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn}) // Shift+Enter: a new line
	e.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(e, "Thanks")
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn}) // Enter: send
	h.loop.until(t, "new answer", func() bool { return !mw.Busy() && len(mw.chat.views) == 2 && lastView(h).msg.Text == "A2" })
	if got := mw.chat.views[0].msg.Text; got != "What is 3+3?\nThanks" {
		t.Fatalf("user turn = %q", got)
	}
	if h.chat.calls[1] != "edit:What is 3+3?\nThanks" {
		t.Fatalf("calls = %v", h.chat.calls)
	}
	// Esc leaves the edit box without sending.
	user = mw.chat.views[0]
	test.Tap(actionButton(user.actions.Objects[1]))
	user.editEntry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if user.editing || len(h.chat.calls) != 2 {
		t.Fatalf("Esc: editing %v, calls %v", user.editing, h.chat.calls)
	}
}

func TestEnterShiftEnterCtrlEnter(t *testing.T) {
	e := look.NewChatEntry()
	w := test.NewTempWindow(t, e)
	w.Canvas().Focus(e)
	sent := 0
	e.OnSend = func() { sent++ }
	test.Type(e, "line one")
	e.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	e.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(e, "line two")
	if e.Text != "line one\nline two" || sent != 0 {
		t.Fatalf("Shift+Enter: text %q, sent %d", e.Text, sent)
	}
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEnter})
	e.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierShortcutDefault})
	if sent != 3 || e.Text != "line one\nline two" {
		t.Fatalf("Enter/keypad Enter/⌘Enter: sent %d, text %q", sent, e.Text)
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
	h.loop.until(t, "three chips", func() bool { return mw.PendingAttachments() == 3 })
	kinds := map[ui.MediaKind]string{}
	for _, o := range mw.chat.comp.chips.Objects {
		c := o.(*chip)
		kinds[c.att.Kind] = chipDetail(c.att)
		if c.remove == nil {
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
	test.Tap(mw.chat.comp.chips.Objects[1].(*chip).remove)
	if mw.PendingAttachments() != 2 || mw.chat.comp.pending[1].Kind != ui.Video {
		t.Fatalf("after remove: %+v", mw.chat.comp.pending)
	}
	// Attachments go out with the message and show in its row.
	mw.SetDraft("What is in these?")
	mw.Submit()
	if mw.PendingAttachments() != 0 || len(mw.chat.views[0].msg.Attachments) != 2 {
		t.Fatalf("sent attachments: %d pending, %d on the message", mw.PendingAttachments(), len(mw.chat.views[0].msg.Attachments))
	}
	h.loop.until(t, "answer", func() bool { return !mw.Busy() })
}

func TestUnsupportedFileIsRefused(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	mw.Drop([]fyne.URI{writeFile(t, "notes.txt", []byte("hello"))})
	h.loop.until(t, "refusal", func() bool { return mw.Notice() != "" })
	if mw.PendingAttachments() != 0 {
		t.Fatal("refused file became a chip")
	}
	if !strings.Contains(mw.Notice(), "notes.txt is not a photo, sound or video") || mw.chat.comp.notice.Hidden {
		t.Fatalf("notice = %q (hidden %v)", mw.Notice(), mw.chat.comp.notice.Hidden)
	}
	// Pasting a file path attaches it like a drop.
	png := writeFile(t, "pasted.png", []byte("\x89PNG"))
	h.app.Clipboard().SetContent(png.String())
	mw.chat.comp.entry.TypedShortcut(&fyne.ShortcutPaste{Clipboard: h.app.Clipboard()})
	h.loop.until(t, "pasted chip", func() bool { return mw.PendingAttachments() == 1 })
	if mw.chat.comp.entry.Text != "" {
		t.Fatalf("path was typed too: %q", mw.chat.comp.entry.Text)
	}
	if !mw.chat.comp.notice.Hidden {
		t.Fatal("refusal still shown after a good attachment")
	}
}

func TestMicClipIsAttached(t *testing.T) {
	h := newHarness(t)
	c := h.ui.Main.chat.comp
	test.Tap(c.mic)
	if !c.rec.active() || c.input.Objects[0] != c.rec.root {
		t.Fatal("recording panel not shown")
	}
	h.rec.last.levels <- 0.4
	h.rec.last.levels <- 0.7
	h.loop.until(t, "level", func() bool { return c.rec.meter.level == 0.7 })
	test.Tap(c.mic) // click again: stop
	h.loop.until(t, "clip chip", func() bool { return len(c.pending) == 1 })
	if a := c.pending[0]; a.Kind != ui.Audio || a.Name != "Voice clip 0:03.wav" {
		t.Fatalf("clip = %+v", a)
	}
	if c.input.Objects[0] != c.entry {
		t.Fatal("entry not back after recording")
	}
}

func TestMicSilenceAndDeniedPermissionExplain(t *testing.T) {
	h := newHarness(t)
	c := h.ui.Main.chat.comp
	test.Tap(c.mic)
	h.rec.last.levels <- 0
	h.loop.drain()
	test.Tap(c.mic)
	if !strings.Contains(c.noticeText.Text, look.PlatformText("Privacy & Security → Microphone", "sound settings")) || len(c.pending) != 0 {
		t.Fatalf("silent clip: notice %q, %d chips", c.noticeText.Text, len(c.pending))
	}
	h.rec.err = errMicDenied
	test.Tap(c.mic)
	if c.rec.active() || c.noticeText.Text != errMicDenied.Error() {
		t.Fatalf("denied: active %v notice %q", c.rec.active(), c.noticeText.Text)
	}
}

var errMicDenied = os.ErrPermission

// The first drop's chips are laid out when they arrive, not at the next
// pointer move (the composer grows at once).
func TestFirstDropShowsChipsAtOnce(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	mw.Drop([]fyne.URI{writeFile(t, "robin.png", []byte("png"))})
	h.loop.until(t, "chip", func() bool { return mw.PendingAttachments() == 1 })
	c := mw.chat.comp
	row := c.stack.Objects[1]
	if c.chipRow.Size().Height == 0 || row.Position().Y < c.chipRow.Size().Height {
		t.Fatalf("chips at %v size %v, input row at %v: not laid out", c.chipRow.Position(), c.chipRow.Size(), row.Position())
	}
	c.removeAt(0)
	if row.Position().Y != 0 {
		t.Fatalf("after removing the chip the input row stays at %v", row.Position())
	}
}
