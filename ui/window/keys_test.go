package window

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/chat"
	"perch/ui/internal/fake"
)

// press delivers a shortcut as the desktop driver does: to the focused
// widget when it takes shortcuts, else to the window.
func press(w fyne.Window, key fyne.KeyName) {
	s := &desktop.CustomShortcut{KeyName: key, Modifier: fyne.KeyModifierShortcutDefault}
	if f, ok := w.Canvas().Focused().(fyne.Shortcutable); ok {
		f.TypedShortcut(s)
		return
	}
	w.Canvas().(fyne.Shortcutable).TypedShortcut(s)
}

// escape delivers Esc as the driver does: to the focused widget, else to the window.
func escape(w fyne.Window) {
	k := &fyne.KeyEvent{Name: fyne.KeyEscape}
	if f := w.Canvas().Focused(); f != nil {
		f.TypedKey(k)
		return
	}
	w.Canvas().OnTypedKey()(k)
}

func composerFocused(mw *MainWindow) bool {
	return mw.Window.Canvas().Focused() == mw.chat.Comp.Entry
}

func TestComposerHasTheFocusWheneverTheChatShows(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	if !composerFocused(mw) {
		t.Fatal("the composer is not focused at launch")
	}
	mw.SetDraft("Q")
	mw.Submit()
	h.loop.Until(t, "answer", func() bool { return !mw.Busy() })
	mw.Window.Canvas().Unfocus()
	test.Tap(mustButton(t, mw.side.root, "New chat"))
	if !composerFocused(mw) || mw.chat.ConvID != "" {
		t.Fatal("the composer is not focused after New chat")
	}
	mw.ShowSettings()
	test.Tap(mustButton(t, mw.pages, "Back to chat"))
	if !composerFocused(mw) {
		t.Fatal("the composer is not focused after closing Settings")
	}
	mw.Window.Canvas().Unfocus()
	mw.side.list.Select(0)
	if !composerFocused(mw) || mw.chat.ConvID == "" {
		t.Fatal("the composer is not focused after opening a chat")
	}
}

func TestEscapeStopsTheAnswer(t *testing.T) {
	h := newHarness(t, fake.Script{Forever: "more ", Every: time.Millisecond})
	mw := h.ui.Main
	for _, focused := range []bool{true, false} {
		mw.SetDraft("go on")
		mw.Submit()
		h.loop.Until(t, "streaming", func() bool { return mw.Busy() && strings.Contains(lastView(h).Msg.Text, "more") })
		if !focused {
			mw.Window.Canvas().Unfocus()
		}
		escape(mw.Window)
		h.loop.Until(t, "stopped", func() bool { return !mw.Busy() })
		if st := lastView(h).Msg.State; st != ui.Stopped {
			t.Fatalf("focused=%v: state after Esc = %s", focused, st)
		}
	}
}

func TestWindowShortcuts(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	mw.SetDraft("Birds")
	mw.Submit()
	h.loop.Until(t, "answer", func() bool { return !mw.Busy() })
	conv := mw.chat.ConvID

	// Ctrl/⌘+K, from the composer: the search box takes the focus.
	press(mw.Window, fyne.KeyK)
	if mw.Window.Canvas().Focused() != mw.side.search {
		t.Fatal("Ctrl+K did not focus the search")
	}
	test.Type(mw.side.search, "bir")
	if len(mw.side.items) != 1 || mw.side.items[0].ID != conv {
		t.Fatalf("search = %+v", mw.side.items)
	}
	escape(mw.Window) // Esc in the search clears it and returns to the composer
	if mw.side.search.Text != "" || !composerFocused(mw) {
		t.Fatal("Esc in the search box")
	}
	// Ctrl/⌘+, opens Settings; Esc goes back.
	press(mw.Window, fyne.KeyComma)
	if mw.page != "settings" {
		t.Fatalf("Ctrl+, shows %q", mw.page)
	}
	mw.Window.Canvas().Unfocus()
	escape(mw.Window)
	if mw.page != "chat" || !composerFocused(mw) {
		t.Fatalf("Esc on Settings: page %q", mw.page)
	}
	// Ctrl/⌘+N, from the search box too: a new chat.
	mw.Window.Canvas().Focus(mw.side.search)
	press(mw.Window, fyne.KeyN)
	if mw.chat.ConvID != "" || len(mw.chat.Views) != 0 || !composerFocused(mw) {
		t.Fatal("Ctrl+N did not start a new chat")
	}
	// Other shortcuts still reach the entry (select all, then typing replaces).
	mw.SetDraft("abc")
	mw.chat.Comp.Entry.TypedShortcut(&fyne.ShortcutSelectAll{})
	test.Type(mw.chat.Comp.Entry, "x")
	if mw.chat.Comp.Entry.Text != "x" {
		t.Fatalf("select all + type = %q", mw.chat.Comp.Entry.Text)
	}
}

func TestContextMarkerAndTheOfferToTrim(t *testing.T) {
	h := newHarness(t, fake.Script{Deltas: fake.Words("one")}, fake.Script{Deltas: fake.Words("two")},
		fake.Script{Deltas: []fake.Delta{{Done: true, State: ui.Failed, Err: &ui.ContextFullError{Msg: "This chat is now longer than the model can read at once."}}}},
		fake.Script{Deltas: fake.Words("three")})
	mw := h.ui.Main
	for _, q := range []string{"first", "second"} {
		mw.SetDraft(q)
		mw.Submit()
		h.loop.Until(t, "answer", func() bool { return !mw.Busy() })
	}
	for _, v := range mw.chat.Views {
		if v.Marker.Visible() {
			t.Fatal("a marker shows before anything was left out")
		}
	}
	mw.SetDraft("third")
	mw.Submit()
	h.loop.Until(t, "failure", func() bool { return !mw.Busy() })
	failed := lastView(h)
	if !failed.Msg.ContextFull {
		t.Fatalf("failure = %+v", failed.Msg)
	}
	// The answer offers to leave the oldest messages out; from then on the
	// model sees the chat from the second question, and the chat says so.
	second := mw.chat.Views[2]
	h.chat.Mu.Lock()
	h.chat.View = &ui.ContextView{FromID: second.Msg.ID}
	h.chat.Mu.Unlock()
	test.Tap(mustButton(t, failed.Note, "Leave the oldest messages out"))
	h.loop.Until(t, "answer after trimming", func() bool { return !mw.Busy() && lastView(h).Msg.Text == "three" })
	if !h.chat.TrimOK[mw.chat.ConvID] {
		t.Fatal("consent was not passed on")
	}
	for i, v := range mw.chat.Views {
		if v.Marker.Visible() != (v == second) {
			t.Fatalf("message %d: marker shown %v", i, v.Marker.Visible())
		}
	}
	if second.MarkerLine != chat.MarkerMessages {
		t.Fatalf("marker = %q", second.MarkerLine)
	}
	// Reopened from the history, the chat shows it in the same place.
	mw.ShowConversation(mw.chat.ConvID)
	if !mw.chat.Views[2].Marker.Visible() {
		t.Fatal("the stored chat lost its marker")
	}
}

// mustButton finds the button labelled label under o.
func mustButton(t *testing.T, o fyne.CanvasObject, label string) *widget.Button {
	t.Helper()
	b := fake.FindButton(o, label)
	if b == nil {
		t.Fatalf("no %q button", label)
	}
	return b
}
