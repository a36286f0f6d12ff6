package window

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/internal/fake"
	"perch/ui/look"
)

func TestQuickAskStreamsAndContinuesInWindow(t *testing.T) {
	h := newHarness(t, fake.Script{Every: time.Millisecond, Deltas: fake.Words("Paris", " is the capital", " of France.")})
	q := h.ui.QuickAsk()
	q.Show()
	if !q.Window.Canvas().Focused().(*look.ChatEntry).Visible() {
		t.Fatal("entry not focused")
	}
	test.Type(q.Comp.Entry, "Capital of France?")
	q.Comp.Entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if !q.Busy() {
		t.Fatal("no answer started")
	}
	h.loop.Until(t, "quick answer", func() bool { return !q.Busy() })
	if got := q.AnswerText(); got != "Paris is the capital of France." {
		t.Fatalf("answer = %q", got)
	}
	if got := renderedText(q.Last); got != "Paris is the capital of France." {
		t.Fatalf("rendered = %q", got)
	}
	// Continue in window: the exchange opens as a full conversation.
	q.ContinueInWindow()
	mw := h.ui.Main
	if len(mw.chat.Views) != 2 || mw.chat.Views[0].Msg.Text != "Capital of France?" || mw.title.Text != "Capital of France?" {
		t.Fatalf("main window shows %d rows, title %q", len(mw.chat.Views), mw.title.Text)
	}
	if q.ConvID != "" || q.Scroll.Visible() {
		t.Fatal("quick ask not reset")
	}
}

func TestQuickAskEscapeCloses(t *testing.T) {
	h := newHarness(t)
	q := h.ui.QuickAsk()
	q.Show()
	q.Comp.Entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if q.Visible() {
		t.Fatal("Esc in the entry did not close the popup")
	}
	q.Toggle()
	if !q.Visible() {
		t.Fatal("Toggle did not open it")
	}
	q.Window.Canvas().Unfocus()
	q.Window.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if q.Visible() {
		t.Fatal("Esc on the popup did not close it")
	}
}

func TestFirstRunDownloadsThenUnlocksChat(t *testing.T) {
	h := newHarness(t)
	h.model.Set(ui.ModelState{})
	mw := h.ui.Main
	h.loop.Drain()
	if mw.page != "welcome" || mw.welcome == nil {
		t.Fatalf("page = %q, want the welcome page", mw.page)
	}
	f := mw.welcome
	if f.Title.Text != "Gemma-4 E2B" || f.Download.Text != "Download (3.0 GB)" {
		t.Fatalf("offer: %q / %q", f.Title.Text, f.Download.Text)
	}
	if !mw.chat.Comp.Entry.Disabled() {
		t.Fatal("composer usable without a model")
	}
	test.Tap(f.Download)
	select {
	case id := <-h.catalog.Started:
		if id != "e2b" {
			t.Fatalf("downloading %q", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("download not started")
	}
	m := h.catalog.List[0]
	m.Download = &ui.DownloadState{Done: 1 << 30, Total: 3 << 30, BytesPerSec: 20 << 20, ETA: 102 * time.Second}
	h.catalog.Update(m)
	h.loop.Drain()
	if f.Progress.Hidden || f.Progress.Value < 0.33 || f.Progress.Value > 0.34 {
		t.Fatalf("progress %v hidden %v", f.Progress.Value, f.Progress.Hidden)
	}
	if f.Rate.Text != "1.0 GB of 3.0 GB · 20.0 MB/s · about 2 min left" {
		t.Fatalf("rate line = %q", f.Rate.Text)
	}
	m.Download, m.Downloaded = nil, true
	h.catalog.Update(m)
	h.loop.Until(t, "chat unlocked", func() bool { return mw.page == "chat" })
	if len(h.model.Used) != 1 || h.model.Used[0] != "e2b" || mw.chat.Comp.Entry.Disabled() {
		t.Fatalf("used %v, entry disabled %v", h.model.Used, mw.chat.Comp.Entry.Disabled())
	}
}

func TestSidebarSearchRenameDelete(t *testing.T) {
	h := newHarness(t, fake.Script{Deltas: fake.Words("ok")})
	mw := h.ui.Main
	for _, q := range []string{"Plan a trip to Lisbon", "Fix my Go code"} {
		mw.ShowConversation("")
		mw.SetDraft(q)
		mw.Submit()
		h.loop.Until(t, "answer", func() bool { return !mw.Busy() })
	}
	if len(mw.side.items) != 2 || mw.side.items[0].Title != "Fix my Go code" {
		t.Fatalf("list = %+v", mw.side.items)
	}
	test.Type(mw.side.search, "lisbon")
	if len(mw.side.items) != 1 || mw.side.items[0].Title != "Plan a trip to Lisbon" {
		t.Fatalf("search = %+v", mw.side.items)
	}
	mw.side.search.SetText("")
	// Selecting a conversation opens it.
	mw.side.list.Select(1)
	if mw.chat.Views[0].Msg.Text != "Plan a trip to Lisbon" {
		t.Fatalf("opened %q", mw.chat.Views[0].Msg.Text)
	}
	if err := h.chat.Rename(mw.side.items[1].ID, "Lisbon"); err != nil {
		t.Fatal(err)
	}
	mw.side.reload()
	if mw.side.items[1].Title != "Lisbon" {
		t.Fatalf("after rename = %+v", mw.side.items)
	}
	id := mw.chat.ConvID
	h.chat.Delete(id)
	mw.side.onDelete(id)
	mw.side.reload()
	if len(mw.side.items) != 1 || mw.chat.ConvID != "" || len(mw.chat.Views) != 0 {
		t.Fatalf("after delete: %d chats, open %q", len(mw.side.items), mw.chat.ConvID)
	}
}

func TestFailedAnswerShowsWordsWithTheRawErrorBehindDetails(t *testing.T) {
	raw := `engine: prefill: alloc 1073741824 bytes: cannot allocate memory`
	h := newHarness(t, fake.Script{Deltas: []fake.Delta{{Text: "Partial"}, {Done: true, State: ui.Failed,
		Err: &ui.Problem{Summary: "The model ran out of memory. Close other apps or choose a smaller model in Models.", Details: raw}}}})
	mw := h.ui.Main
	mw.SetDraft("Describe")
	mw.Submit()
	h.loop.Until(t, "failure", func() bool { return !mw.Busy() })
	v := lastView(h)
	if v.Msg.State != ui.Failed || len(v.Note.Objects) != 2 || v.Msg.ErrDetails != raw {
		t.Fatalf("state %q, %d note objects, details %q", v.Msg.State, len(v.Note.Objects), v.Msg.ErrDetails)
	}
	box := v.Note.Objects[0].(*fyne.Container)
	summary := box.Objects[0].(*fyne.Container).Objects[0].(*widget.Label)
	more := box.Objects[1].(*widget.Accordion)
	if !strings.Contains(summary.Text, "choose a smaller model") || strings.Contains(summary.Text, "alloc") {
		t.Fatalf("summary = %q", summary.Text)
	}
	if !more.Visible() || more.Items[0].Open || more.Items[0].Title != "Details" || more.Items[0].Detail.(*widget.Label).Text != raw {
		t.Fatal("the raw error is not behind a closed Details")
	}
}

func TestTrayLabels(t *testing.T) {
	tr := &tray{quick: fyne.NewMenuItem("", nil), model: fyne.NewMenuItem("", nil), unload: fyne.NewMenuItem("", nil)}
	m := &fake.Model{}
	tr.setHotkey("")
	if tr.quick.Label != "Quick Ask…" {
		t.Fatalf("no active shortcut, but the menu says %q", tr.quick.Label)
	}
	tr.setHotkey("Option+Space")
	tr.setModel(ui.ModelState{ID: "e2b", Name: "Gemma-4 E2B", Loaded: true}, m)
	if tr.quick.Label != "Quick Ask…    "+look.PlatformText("⌥Space", "Alt+Space") || tr.model.Label != "Gemma-4 E2B: ready" || tr.unload.Label != "Unload model (free memory)" {
		t.Fatalf("labels %q / %q / %q", tr.quick.Label, tr.model.Label, tr.unload.Label)
	}
	tr.setModel(ui.ModelState{ID: "e2b", Name: "Gemma-4 E2B"}, m)
	if tr.unload.Label != "Load model" || tr.unload.Disabled {
		t.Fatalf("unloaded: %q disabled %v", tr.unload.Label, tr.unload.Disabled)
	}
	tr.setModel(ui.ModelState{}, m)
	if tr.model.Label != "No model yet" || !tr.unload.Disabled {
		t.Fatalf("no model: %q", tr.model.Label)
	}
}
