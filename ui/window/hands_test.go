package window

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/chat"
	"perch/ui/internal/fake"
	"perch/ui/look"
	"perch/ui/teach"
)

// What a newcomer's hands meet: where the view goes after an action, which
// box has the keyboard, what is saved without asking.

// inView reports whether o's top lies within scroll's visible part.
func inView(s, o fyne.CanvasObject) bool {
	d := fyne.CurrentApp().Driver()
	top := d.AbsolutePositionForObject(o).Y - d.AbsolutePositionForObject(s).Y
	return top >= 0 && top < s.Size().Height
}

func TestStartingARunShowsItsCard(t *testing.T) {
	h := newTeachHarness(t)
	h.teacher.Summary = ui.DataSummary{Pairs: 6}
	v := openTeach(h)
	if v.Start.Disabled() {
		t.Fatalf("cannot start: %q", v.Problem.Text)
	}
	v.Scroll.ScrollToBottom() // where "Start training" is
	if v.Scroll.Offset.Y == 0 {
		t.Fatal("the Teach page does not scroll at 900×640: the test shows nothing")
	}
	test.Tap(v.Start)
	h.loop.Until(t, "the run shown", func() bool { return v.Run.Shown && v.Run.Run.ID != "" })
	if v.Scroll.Offset.Y != 0 || !v.Run.Root.Visible() || !inView(v.Scroll, v.Run.Root) {
		t.Fatalf("after Start the page stays at %.0f px: the run's card is out of view", v.Scroll.Offset.Y)
	}
	// Back on the page later, it opens at its top again.
	v.Scroll.ScrollToBottom()
	h.ui.Main.ShowChat()
	h.ui.Main.ShowTeach()
	if v.Scroll.Offset.Y != 0 {
		t.Fatalf("Teach reopened %.0f px down", v.Scroll.Offset.Y)
	}
}

// Typing right after the pencil lands in the box it opened, though another
// window was created after the main one (the test driver's CanvasForObject
// answers with the newest window; the real one with none for a new box).
func TestCorrectionAndEditBoxesTakeTheKeyboard(t *testing.T) {
	h := newTeachHarness(t, fake.Script{Deltas: fake.Words("The capital is Lyon.")})
	mw := h.ui.Main
	v := answerOnce(h.harness, "Capital of France?")
	other := h.app.NewWindow("another window")
	other.Show()
	defer other.Close()

	test.Tap(feedbackButton(v, theme.DocumentCreateIcon()))
	ed := v.Body.Objects[1].(*widget.Entry)
	if mw.Window.Canvas().Focused() != ed {
		t.Fatalf("the correction box does not have the keyboard: %T does", mw.Window.Canvas().Focused())
	}
	typed := func(text string) { // as keys go: to what has the focus
		mw.Window.Canvas().Focused().(fyne.Shortcutable).TypedShortcut(&fyne.ShortcutSelectAll{})
		test.Type(mw.Window.Canvas().Focused(), text)
	}
	typed("Paris.")
	if ed.Text != "Paris." {
		t.Fatalf("Ctrl+A and typing after the pencil gave %q", ed.Text)
	}

	user := mw.chat.Views[0]
	test.Tap(actionButton(user.Actions.Objects[1])) // edit
	if mw.Window.Canvas().Focused() != user.EditEntry {
		t.Fatal("the edit box does not have the keyboard")
	}
	typed("And Spain?")
	if got := user.EditEntry.Text; got != "And Spain?" {
		t.Fatalf("typing after the pencil gave %q", got)
	}
}

// longChat stores a conversation of n question-and-answer pairs.
func longChat(h *harness, title string, n int) string {
	c, _ := h.chat.NewConversation()
	h.chat.Rename(c.ID, title)
	var msgs []ui.Message
	for i := 1; i <= n; i++ {
		msgs = append(msgs,
			ui.Message{ID: fmt.Sprintf("%s-u%d", c.ID, i), Role: ui.User, Text: fmt.Sprintf("Question %d?", i), State: ui.Done},
			ui.Message{ID: fmt.Sprintf("%s-a%d", c.ID, i), Role: ui.Assistant, State: ui.Done,
				Text: fmt.Sprintf("Answer %d. ", i) + strings.Repeat("A sentence long enough to wrap at this width. ", 4)})
	}
	h.chat.Mu.Lock()
	h.chat.Msgs[c.ID] = msgs
	h.chat.Mu.Unlock()
	return c.ID
}

func TestReopenedChatShowsItsLatestMessage(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	long := longChat(h, "A long chat", 20)
	mw.side.reload()
	mw.ShowConversation("") // a blank chat first: the list is short
	mw.ShowSettings()       // and another page in front
	mw.side.list.Select(0)  // as a click in the sidebar
	h.loop.Drain()
	if mw.chat.ConvID != long {
		t.Fatalf("opened %q", mw.chat.ConvID)
	}
	s := mw.chat.Scroll
	last := mw.chat.Views[len(mw.chat.Views)-1]
	if s.Offset.Y == 0 || !inView(s, last.Root) {
		t.Fatalf("reopened at %.0f px of %.0f: the latest answer is out of view", s.Offset.Y, s.Content.MinSize().Height)
	}
}

func TestSearchHitOpensAtTheMatch(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	longChat(h, "A long chat", 20)
	mw.side.search.SetText("Question 12?")
	if len(mw.side.items) != 1 || mw.side.items[0].Snippet == "" {
		t.Fatalf("search found %+v", mw.side.items)
	}
	mw.side.list.Select(0)
	h.loop.Drain()
	s := mw.chat.Scroll
	hit := mw.chat.Views[22] // Question 12?
	if hit.Msg.Text != "Question 12?" || !inView(s, hit.Root) {
		t.Fatalf("the hit %q is out of view at %.0f px", hit.Msg.Text, s.Offset.Y)
	}
}

// Settings keep what was typed without a Save button (as macOS settings
// do): the Temperature typed as 0.5, then Back to chat, then Ctrl+,.
func TestSettingsSavedAsYouChangeThem(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	var applied int
	h.ui.env.ApplySettings = func(old, new ui.Settings) error { applied++; return nil }
	mw.ShowSettings()
	v := mw.settings
	if applied != 0 {
		t.Fatalf("opening Settings applied them %d times", applied)
	}
	test.Type(v.Gen.Temp, "0.5")
	mw.ShowChat() // "Back to chat" before the typing pause ends
	mw.ShowSettings()
	if v.Gen.Temp.Text != "0.5" {
		t.Fatalf("Temperature shows %q after leaving and coming back", v.Gen.Temp.Text)
	}
	if got := (ui.PrefsSettings{P: h.app.Preferences()}).Load().Sampling.Temperature; got == nil || *got != 0.5 {
		t.Fatalf("stored temperature %v", got)
	}
	// A choice is saved at once; typing once it pauses, applied once.
	v.Thinking.SetChecked(true)
	if !(ui.PrefsSettings{P: h.app.Preferences()}).Load().Thinking {
		t.Fatal("the Thinking choice was not saved")
	}
	applied = 0
	v.Port.SetText("")
	test.Type(v.Port, "8080") // 8, 80 and 808 are no ports to apply
	h.loop.Until(t, "the port saved after the pause", func() bool {
		return (ui.PrefsSettings{P: h.app.Preferences()}).Load().LocalAPIPort == 8080
	})
	if applied != 1 {
		t.Fatalf("a pause in typing applied the settings %d times", applied)
	}
	// A value that cannot be saved is said when the page is left.
	v.Gen.MaxTokens.SetText("lots")
	mw.ShowChat()
	d := mw.Window.Canvas().Overlays().Top()
	if d == nil || !strings.Contains(strings.Join(fake.Texts(d), "|"), "max tokens must be a whole number") {
		t.Fatal("leaving with a value that cannot be saved said nothing")
	}
}

// Models and Teach speak of memory in one sentence, against one budget.
func TestModelsAndTeachSayMemoryAlike(t *testing.T) {
	h := newTeachHarness(t)
	h.teacher.Summary = ui.DataSummary{Pairs: 6}
	h.teacher.Estimated.Memory, h.teacher.Estimated.Available = 5<<30, 24<<30
	for i := range h.catalog.List {
		h.catalog.List[i].Budget = 24 << 30
	}
	mw := h.ui.Main
	mw.ShowModels()
	h.loop.Drain()
	budget := "of the 24.0 GB " + look.PlatformText("this Mac", "this computer") + " can give"
	if got := mw.models.Rows["e2b"].Facts.Text; !strings.Contains(got, "needs 4.0 GB "+budget) {
		t.Fatalf("Models says %q", got)
	}
	if got := mw.models.Rows["31b"].Facts.Text; !strings.Contains(got, "needs 24.0 GB "+budget+" · too big") {
		t.Fatalf("Models says %q", got)
	}
	v := openTeach(h)
	if !strings.Contains(v.Estimate.Text, "needs 5.0 GB "+budget) {
		t.Fatalf("Teach says %q", v.Estimate.Text)
	}
	h.teacher.Estimated.Tight = true
	v.Check()
	settle(h.harness, v)
	if !strings.Contains(v.Estimate.Text, "needs 5.0 GB "+budget+" · tight fit: close other apps") {
		t.Fatalf("Teach says %q", v.Estimate.Text)
	}
}

// Teach's time estimate says a short run is short, one way at every length
// (it said "About a minute" for a run of 5 s, and "About 1 min" elsewhere).
func TestTeachTimeEstimateWords(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{5 * time.Second, "Under a minute · "},
		{59 * time.Second, "Under a minute · "},
		{70 * time.Second, "About 1 min · "},
		{12 * time.Minute, "About 12 min · "},
		{90 * time.Minute, "About 1.5 h · "},
	} {
		if got := teach.EstimateLine(ui.TrainEstimate{Duration: c.d, Memory: 1 << 30}); !strings.HasPrefix(got, c.want) {
			t.Errorf("%v: %q, want it to start %q", c.d, got, c.want)
		}
	}
}

// The correction box starts with the answer as shown: the tokens the
// markdown view hides are not in it (nor in Teach's preview).
func TestCorrectionBoxHoldsWhatTheAnswerShows(t *testing.T) {
	raw := "Paris<unused3> is<mask> the capital.<end_of_turn>\n\n```go\nvar m map[string]<T>\n```\nUse `<b>` for bold."
	h := newTeachHarness(t, fake.Script{Deltas: fake.Words(raw)})
	v := answerOnce(h.harness, "Capital of France?")
	// The chat hides what markdown reads as HTML tags, and shows the rest.
	if shown := renderedText(v); shown != "Paris is the capital.<end_of_turn>[code]var m map[string]<T>[/code]Use <b> for bold." {
		t.Fatalf("the chat shows %q", shown)
	}
	test.Tap(feedbackButton(v, theme.DocumentCreateIcon()))
	ed := v.Body.Objects[1].(*widget.Entry)
	if want := "Paris is the capital.<end_of_turn>\n\n```go\nvar m map[string]<T>\n```\nUse `<b>` for bold."; ed.Text != want {
		t.Fatalf("the correction box holds %q, want %q", ed.Text, want)
	}
	// Saving it unchanged is no correction.
	save := v.Body.Objects[2].(*fyne.Container).Objects[2].(*widget.Button)
	test.Tap(save)
	h.loop.Drain()
	if len(h.feedback.Fixes) != 0 {
		t.Fatalf("an unchanged box saved a correction: %v", h.feedback.Fixes)
	}
	if got := fake.Texts(teach.PreviewCard(ui.DataPreview{Prompt: "Q<pad>?", Chosen: "Yes.<eos>", Rejected: "No<unused1>."})); strings.Contains(strings.Join(got, "|"), "<") {
		t.Fatalf("Teach's preview shows tokens: %q", got)
	}
}

func FuzzShownText(f *testing.F) {
	for _, s := range []string{"", "a<eos>b", "```\n<T>\n```", "`<b>`<i>", "<|image|><turn|>", "``` unclosed <x>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := look.ShownText(s)
		if again := look.ShownText(once); again != once {
			t.Fatalf("not settled: %q -> %q -> %q", s, once, again)
		}
		if len(once) > len(s) {
			t.Fatalf("grew: %q -> %q", s, once)
		}
	})
}

// Teach's run card explains itself: no "Validation" entry for a line that
// never comes, the charts in words, Stop's choices named, and Done says
// how long it took and what it made.
func TestTeachRunCardSaysWhatItMeans(t *testing.T) {
	h := newTeachHarness(t)
	h.teacher.Summary = ui.DataSummary{Pairs: 6}
	v := openTeach(h)
	test.Tap(v.Start)
	h.loop.Until(t, "the run shown", func() bool { return v.Run.Shown && v.Run.Run.ID != "" })
	run := v.Run.Run
	run.State, run.Steps, run.Step = ui.RunTraining, 20, 1
	h.teacher.Emit(ui.TrainUpdate{Run: run, Points: []ui.TrainPoint{{Step: 1, Loss: 0.7, ValLoss: math.NaN(), Margin: 0.01}}})
	h.loop.Until(t, "a point", func() bool { return v.Run.Loss.Len(0) == 1 })
	h.loop.Drain()
	if fake.FindButton(h.ui.Main.side.root, "Teach · 5%") == nil { // seen from every page
		t.Fatal("the sidebar's Teach button does not show the run going")
	}
	test.WidgetRenderer(v.Run.Loss).Layout(v.Run.Loss.Size())
	if l := v.Run.Loss.R.Legend; !l[0].Text.Visible() || l[1].Text.Visible() || l[1].Text.Text != "Validation" {
		t.Fatalf("legend before any validation point: training shown %v, validation shown %v", l[0].Text.Visible(), l[1].Text.Visible())
	}
	if !strings.Contains(v.Run.Explain.Text, "chosen − rejected") {
		t.Fatalf("the margin chart is not explained: %q", v.Run.Explain.Text)
	}
	test.Tap(v.Run.Stop)
	d := h.ui.Main.Window.Canvas().Overlays().Top()
	if fake.FindButton(d, "Stop training") == nil || fake.FindButton(d, "Keep training") == nil || fake.FindButton(d, "Yes") != nil {
		t.Fatalf("Stop asks with %q", fake.Texts(d))
	}
	test.Tap(fake.FindButton(d, "Keep training"))
	run.State, run.Step = ui.RunDone, 20
	run.Started, run.Ended = time.Unix(1000, 0), time.Unix(1000+65, 0)
	h.teacher.Emit(ui.TrainUpdate{Run: run})
	h.loop.Until(t, "done", func() bool { return v.Run.Run.State == ui.RunDone })
	if got := v.Run.State.Text; !strings.HasPrefix(got, "Done in 1 min 5 s · 20 steps · saved as the adapter my-style") {
		t.Fatalf("done line %q", got)
	}
	h.loop.Drain()
	if fake.FindButton(h.ui.Main.side.root, "Teach") == nil {
		t.Fatal("the sidebar's Teach button still shows a run that ended")
	}
}

// Before a model: New chat says why nothing opened, a download that failed
// before its first byte offers to try again (not to resume), and Enter in
// search opens the top hit; with one, Settings names the model in use.
func TestWithoutAModelTheButtonsSayWhatHappens(t *testing.T) {
	h := newHarness(t)
	mw := h.ui.Main
	if got := (func() string { mw.ShowSettings(); return mw.settings.Model.PlaceHolder })(); got != "Gemma-4 E2B, the model in use" {
		t.Fatalf("Settings' default model with none chosen says %q", got)
	}
	long := longChat(h, "A long chat", 3)
	mw.ShowConversation("")
	mw.side.search.SetText("long")
	mw.side.search.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if mw.chat.ConvID != long || mw.page != "chat" {
		t.Fatalf("Enter in search opened %q on the %s page", mw.chat.ConvID, mw.page)
	}

	h.model.Set(ui.ModelState{})
	h.loop.Drain()
	if mw.page != "welcome" {
		t.Fatalf("without a model the %s page shows", mw.page)
	}
	before := mw.welcome.Intro.Text
	mw.side.onNew()
	if mw.welcome.Intro.Text == before || !strings.Contains(mw.welcome.Intro.Text, "needs a model") {
		t.Fatalf("New chat without a model said %q", mw.welcome.Intro.Text)
	}
	m := h.catalog.List[0]
	m.Download = &ui.DownloadState{Err: "You seem to be offline."}
	h.catalog.Update(m)
	h.loop.Drain()
	if got := mw.welcome.Download.Text; got != "Try again" {
		t.Fatalf("after an offline failure the welcome page offers %q", got)
	}
	mw.ShowModels()
	h.loop.Drain()
	if got := mw.models.Rows[m.ID].Buttons.Objects[0].(*widget.Button).Text; got != "Try again" {
		t.Fatalf("after an offline failure the models page offers %q", got)
	}
	m.Download = &ui.DownloadState{Done: 1 << 20, Total: 3 << 30, Err: "You seem to be offline."}
	h.catalog.Update(m)
	h.loop.Drain()
	if got := mw.models.Rows[m.ID].Buttons.Objects[0].(*widget.Button).Text; got != "Resume" {
		t.Fatalf("with 1 MB downloaded the models page offers %q", got)
	}
}

// actionButton is the button o is, tooltip or not (nil when o is none).
func actionButton(o fyne.CanvasObject) *widget.Button {
	switch b := o.(type) {
	case *widget.Button:
		return b
	case *look.TipButton:
		return &b.Button
	}
	return nil
}

// Every icon button under a message says what it does on hover, and the
// two pencils differ: one edits your message, one corrects the answer.
func TestIconButtonsSayWhatTheyDo(t *testing.T) {
	h := newTeachHarness(t, fake.Script{Deltas: fake.Words("Paris.")})
	mw := h.ui.Main
	answer := answerOnce(h.harness, "Capital of France?")
	user := mw.chat.Views[0]
	tips := map[string]bool{}
	for _, v := range []*chat.MessageView{user, answer} {
		for _, o := range v.Actions.Objects {
			b, ok := o.(*look.TipButton)
			if !ok {
				if wb := actionButton(o); wb != nil && wb.Text == "" {
					t.Errorf("an icon button without a tooltip under the %s message", v.Msg.Role)
				}
				continue
			}
			b.MouseIn(&desktop.MouseEvent{})
			if got := mw.chat.Tips.Shown(); got != b.Tip || got == "" {
				t.Errorf("hovering %q shows %q", b.Tip, got)
			}
			b.MouseOut()
			if mw.chat.Tips.Shown() != "" {
				t.Error("the tooltip stayed after the pointer left")
			}
			tips[b.Tip] = true
		}
	}
	if !tips["Edit your message and ask again"] || !strings.Contains(strings.Join(fake.Texts(answer.Actions), "|"), "Correct") {
		t.Fatalf("the pencils are not told apart: %v", tips)
	}
	var down bool
	for tip := range tips {
		down = down || strings.Contains(tip, "Teach learns")
	}
	if !down {
		t.Fatalf("nothing says a thumbs-down feeds Teach: %v", tips)
	}
}

// The screenshot harness's pencil finds the answer's Correct button.
func TestScriptedPencilOpensTheCorrectionBox(t *testing.T) {
	h := newTeachHarness(t, fake.Script{Deltas: fake.Words("Lyon.")})
	mw := h.ui.Main
	answerOnce(h.harness, "Capital of France?")
	if err := mw.PressCorrectLast(); err != nil {
		t.Fatal(err)
	}
	if text, focused, err := mw.CorrectionDraft(); err != nil || text != "Lyon." || !focused {
		t.Fatalf("box %q, keyboard %v, %v", text, focused, err)
	}
}
