package window

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"perch/engine/sample"
	"perch/ui"
	"perch/ui/look"
	"perch/ui/settings"
)

func TestQuickAskStreamsAndContinuesInWindow(t *testing.T) {
	h := newHarness(t, script{every: time.Millisecond, deltas: words("Paris", " is the capital", " of France.")})
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
	h.loop.until(t, "quick answer", func() bool { return !q.Busy() })
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

func TestSettingsPersistAndUnsetStaysUnset(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	h.ui.env.Budgets = []int{70, 140, 280, 560, 1120}
	h.model.set(ui.ModelState{ID: "e2b", Name: "Gemma-4 E2B", Loaded: true, Vision: true,
		Defaults: &ui.ModelDefaults{Sampling: sample.Params{Temperature: 1, TopP: 0.95, TopK: 64}, ImageTokens: 280, VideoFPS: 2, MaxFrames: 32, MaxTokens: 2048}})
	h.loop.drain()
	mw.ShowSettings()
	v := mw.settings
	g := v.Gen
	// Nothing set: empty fields showing the model's own values.
	if g.Temp.Text != "" || g.Temp.PlaceHolder != "Model default · 1" || g.TopK.PlaceHolder != "Model default · 64" ||
		g.Budget.SelectedIndex() != 0 || g.Budget.Selected != "Model default · 280 tokens" || v.Hotkey.Text != ui.DefaultHotkey {
		t.Fatalf("defaults shown: temp %q/%q top-k %q budget %q", g.Temp.Text, g.Temp.PlaceHolder, g.TopK.PlaceHolder, g.Budget.Selected)
	}
	g.Temp.SetText("0.4")
	v.System.SetText("Answer like a pirate.")
	v.Thinking.SetChecked(true)
	g.Budget.SetSelected("1120 tokens")
	g.TopK.SetText("40")
	v.Hotkey.SetText("ctrl+shift+space")
	var applied []ui.Settings
	h.ui.env.ApplySettings = func(old, new ui.Settings) error { applied = append(applied, old, new); return nil }
	v.Save()
	if v.Status.Text != "Saved." {
		t.Fatalf("status = %q", v.Status.Text)
	}
	if len(applied) != 2 || applied[0].Hotkey != ui.DefaultHotkey || applied[1].Hotkey != "Ctrl+Shift+Space" {
		t.Fatalf("apply got %+v", applied)
	}
	// A fresh store over the same preferences reads what was saved, and
	// what was left alone is still unset.
	got := ui.PrefsSettings{P: h.app.Preferences()}.Load()
	want := ui.DefaultSettings()
	want.Sampling.Temperature, want.SystemPrompt, want.Thinking, want.ImageTokens, want.Sampling.TopK, want.Hotkey =
		ui.Ptr[float32](0.4), "Answer like a pirate.", true, ui.Ptr(1120), ui.Ptr(40), "Ctrl+Shift+Space"
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %+v\nwant   %+v", got, want)
	}
	if got.Sampling.TopP != nil || got.MaxTokens != nil || got.VideoFPS != nil || got.MaxFrames != nil {
		t.Fatal("settings never touched came back set")
	}
	// And a fresh view shows it.
	v2 := settings.NewView(h.ui.env, mw.Window)
	if v2.Gen.Temp.Text != "0.4" || !v2.Thinking.Checked || v2.Hotkey.Text != "Ctrl+Shift+Space" || v2.Gen.TopK.Text != "40" ||
		v2.Gen.TopP.Text != "" || v2.Gen.Budget.Selected != "1120 tokens" {
		t.Fatalf("reopened view: temp %q top-p %q hotkey %q", v2.Gen.Temp.Text, v2.Gen.TopP.Text, v2.Hotkey.Text)
	}
	// Bad input is refused with the reason, and nothing changes.
	v2.Hotkey.SetText("Space")
	v2.Gen.MaxTokens.SetText("lots")
	v2.Save()
	if !strings.HasPrefix(v2.Status.Text, "Not saved: max tokens must be a whole number") {
		t.Fatalf("status = %q", v2.Status.Text)
	}
	if !reflect.DeepEqual((ui.PrefsSettings{P: h.app.Preferences()}).Load(), want) {
		t.Fatal("invalid settings were saved")
	}
	// "Use the model's defaults" unsets them all again.
	v2.Load()
	v2.Gen.Reset()
	v2.Save()
	got = ui.PrefsSettings{P: h.app.Preferences()}.Load()
	if got.Sampling.Temperature != nil || got.Sampling.TopK != nil || got.ImageTokens != nil || got.SystemPrompt != "Answer like a pirate." {
		t.Fatalf("after reset: %+v", got)
	}
}

// Preferences written by the first version (every value stored, the old
// hard-coded defaults among them) read as unset where they were defaults.
func TestOldPreferencesForgetHardCodedDefaults(t *testing.T) {
	a := test.NewTempApp(t)
	p := a.Preferences()
	p.SetString("perch.hotkey", "Option+Space")
	p.SetFloat("perch.temperature", 1)
	p.SetFloat("perch.topP", 0.95)
	p.SetInt("perch.topK", 40) // the user's own
	p.SetInt("perch.maxTokens", 4096)
	p.SetInt("perch.imageTokens", 280)
	s := ui.PrefsSettings{P: p}.Load()
	if s.Sampling.Temperature != nil || s.Sampling.TopP != nil || s.MaxTokens != nil || s.ImageTokens != nil || s.Sampling.TopK == nil || *s.Sampling.TopK != 40 {
		t.Fatalf("upgraded settings = %+v", s)
	}
}

func TestFirstRunDownloadsThenUnlocksChat(t *testing.T) {
	h := newHarness(t)
	h.model.set(ui.ModelState{})
	mw := h.ui.Main
	h.loop.drain()
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
	case id := <-h.catalog.started:
		if id != "e2b" {
			t.Fatalf("downloading %q", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("download not started")
	}
	m := h.catalog.models[0]
	m.Download = &ui.DownloadState{Done: 1 << 30, Total: 3 << 30, BytesPerSec: 20 << 20, ETA: 102 * time.Second}
	h.catalog.update(m)
	h.loop.drain()
	if f.Progress.Hidden || f.Progress.Value < 0.33 || f.Progress.Value > 0.34 {
		t.Fatalf("progress %v hidden %v", f.Progress.Value, f.Progress.Hidden)
	}
	if f.Rate.Text != "1.0 GB of 3.0 GB · 20.0 MB/s · about 2 min left" {
		t.Fatalf("rate line = %q", f.Rate.Text)
	}
	m.Download, m.Downloaded = nil, true
	h.catalog.update(m)
	h.loop.until(t, "chat unlocked", func() bool { return mw.page == "chat" })
	if len(h.model.used) != 1 || h.model.used[0] != "e2b" || mw.chat.Comp.Entry.Disabled() {
		t.Fatalf("used %v, entry disabled %v", h.model.used, mw.chat.Comp.Entry.Disabled())
	}
}

func TestModelsViewShowsFitAndDownloads(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	mw.ShowModels()
	v := mw.models
	big := v.Rows["31b"]
	if !strings.Contains(big.Facts.Text, "18.0 GB on disk · needs 24.0 GB of memory · too big for this computer") ||
		big.Facts.Importance != widget.DangerImportance {
		t.Fatalf("31B facts = %q (%v)", big.Facts.Text, big.Facts.Importance)
	}
	small := v.Rows["e2b"]
	if len(small.Badges.Objects) != 2 { // Recommended, In use
		t.Fatalf("e2b badges = %d", len(small.Badges.Objects))
	}
	m := h.catalog.models[1]
	m.Download = &ui.DownloadState{Done: 9 << 30, Total: 18 << 30, BytesPerSec: 50 << 20, ETA: 3 * time.Minute}
	h.catalog.update(m)
	h.loop.drain()
	if big.DlBox.Hidden || big.Progress.Value != 0.5 || big.Buttons.Objects[0].(*widget.Button).Text != "Pause" {
		t.Fatalf("download row: hidden %v value %v", big.DlBox.Hidden, big.Progress.Value)
	}
	m.Download.Paused = true
	h.catalog.update(m)
	h.loop.drain()
	if big.Buttons.Objects[0].(*widget.Button).Text != "Resume" || !strings.HasSuffix(big.Rate.Text, "paused") {
		t.Fatalf("paused row: %q", big.Rate.Text)
	}
	// A bad folder explains itself.
	v.UseFolder(filepath.Join(t.TempDir(), "nothing-here"))
	h.loop.until(t, "folder error", func() bool { return v.Problem.Root.Visible() })
	if !strings.Contains(v.Problem.Summary.Text, "has no config.json") {
		t.Fatalf("folder error = %q", v.Problem.Summary.Text)
	}
}

func TestSidebarSearchRenameDelete(t *testing.T) {
	h := newHarness(t, script{deltas: words("ok")})
	mw := h.ui.Main
	for _, q := range []string{"Plan a trip to Lisbon", "Fix my Go code"} {
		mw.ShowConversation("")
		mw.SetDraft(q)
		mw.Submit()
		h.loop.until(t, "answer", func() bool { return !mw.Busy() })
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
	h := newHarness(t, script{deltas: []Delta{{Text: "Partial"}, {Done: true, State: ui.Failed,
		Err: &ui.Problem{Summary: "The model ran out of memory. Close other apps or choose a smaller model in Models.", Details: raw}}}})
	mw := h.ui.Main
	mw.SetDraft("Describe")
	mw.Submit()
	h.loop.until(t, "failure", func() bool { return !mw.Busy() })
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
	m := &fakeModel{}
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
