package window

import (
	"math"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/chat"
	"perch/ui/internal/fake"
	"perch/ui/look"
	"perch/ui/teach"
)

// answerOnce sends text in the main window and waits for the answer.
func answerOnce(h *harness, text string) *chat.MessageView {
	mw := h.ui.Main
	mw.SetDraft(text)
	mw.Submit()
	h.loop.Until(h.t, "the answer", func() bool { return !mw.Busy() })
	return lastView(h)
}

// feedbackButton is an answer's button showing icon res (nil when absent).
func feedbackButton(v *chat.MessageView, res ...fyne.Resource) *widget.Button {
	for _, o := range v.Actions.Objects {
		if b := actionButton(o); b != nil {
			for _, r := range res {
				if b.Icon != nil && b.Icon.Name() == r.Name() {
					return b
				}
			}
		}
	}
	return nil
}

func TestFeedbackButtonsStoreRatings(t *testing.T) {
	h := newTeachHarness(t, fake.Script{Deltas: fake.Words("Paris.")})
	v := answerOnce(h.harness, "Capital of France?")
	id := v.Msg.ID
	up := feedbackButton(v, look.ThumbUpIcon)
	if up == nil || feedbackButton(v, look.ThumbDownIcon) == nil {
		t.Fatal("an answer has no thumbs")
	}
	test.Tap(up)
	h.loop.Until(t, "the rating stored", func() bool { return h.feedback.Rating(id) == ui.ThumbUp })
	if feedbackButton(v, look.ThumbUpChosen) == nil || v.Msg.Rating != ui.ThumbUp {
		t.Fatal("thumbs up not shown as chosen")
	}
	test.Tap(feedbackButton(v, look.ThumbDownIcon))
	h.loop.Until(t, "thumbs down stored", func() bool { return h.feedback.Rating(id) == ui.ThumbDown })
	if feedbackButton(v, look.ThumbUpIcon) == nil || feedbackButton(v, look.ThumbDownChosen) == nil {
		t.Fatal("switching to thumbs down did not show")
	}
	test.Tap(feedbackButton(v, look.ThumbDownChosen)) // a second tap takes it back
	h.loop.Until(t, "rating cleared", func() bool { return h.feedback.Rating(id) == ui.Unrated })
	// The user's own turns take no thumbs.
	if feedbackButton(h.ui.Main.chat.Views[0], look.ThumbUpIcon, look.ThumbUpChosen) != nil {
		t.Fatal("a user message has thumbs")
	}

	// Quick-ask answers take them too.
	q := h.ui.QuickAsk()
	q.Show()
	q.SetDraft("And Spain?")
	q.Submit()
	h.loop.Until(t, "the quick answer", func() bool { return !q.Busy() })
	qa, _ := q.Answer()
	b := feedbackButton(q.Last, look.ThumbDownIcon)
	if b == nil {
		t.Fatal("quick-ask answer has no thumbs")
	}
	test.Tap(b)
	h.loop.Until(t, "quick-ask rating stored", func() bool { return h.feedback.Rating(qa.ID) == ui.ThumbDown })
}

func TestCorrectionSavedAsNewVersion(t *testing.T) {
	h := newTeachHarness(t, fake.Script{Deltas: fake.Words("The capital is Lyon.")})
	v := answerOnce(h.harness, "Capital of France?")
	test.Tap(feedbackButton(v, look.ThumbDownIcon))
	fix := feedbackButton(v, theme.DocumentCreateIcon())
	if fix == nil {
		t.Fatal("no correct button")
	}
	test.Tap(fix)
	ed, ok := v.Body.Objects[1].(*widget.Entry)
	if !ok || ed.Text != "The capital is Lyon." {
		t.Fatalf("correction editor not shown: %T", v.Body.Objects[1])
	}
	ed.SetText("The capital of France is Paris.")
	save := v.Body.Objects[2].(*fyne.Container).Objects[2].(*widget.Button)
	test.Tap(save)
	h.loop.Until(t, "the correction", func() bool { return v.Msg.Edited })
	if got := h.feedback.Fixes[v.Msg.ID]; got != "The capital of France is Paris." {
		t.Fatalf("stored correction %q", got)
	}
	if got := renderedText(v); got != "The capital of France is Paris." {
		t.Fatalf("shown %q", got)
	}
	if !strings.Contains(strings.Join(fake.Texts(v.Root), "|"), "your correction") {
		t.Fatal("the corrected answer is not marked as the user's")
	}
}

// openTeach shows the Teach page and waits for its checks to settle.
func openTeach(h *teachHarness) *teach.View {
	h.ui.Main.ShowTeach()
	v := h.ui.Main.teach
	settle(h.harness, v)
	return v
}

// settle waits until the newest form check has come back.
func settle(h *harness, v *teach.View) {
	h.loop.Until(h.t, "the Teach page's check", func() bool { return v.Checked == v.Checking.Load() })
}

func TestTeachRunChartUpdatesAndStops(t *testing.T) {
	h := newTeachHarness(t)
	h.teacher.Summary = ui.DataSummary{Pairs: 6, Examples: 2,
		Preview: []ui.DataPreview{{Prompt: "Capital?", Chosen: "Paris.", Rejected: "Lyon.", Origin: "your correction"}}}
	v := openTeach(h)
	if v.Start.Disabled() {
		t.Fatalf("cannot start: %q", v.Problem.Text)
	}
	v.Fields["steps"].SetText("50")
	settle(h.harness, v)
	test.Tap(v.Start)
	h.loop.Until(t, "the run shown", func() bool { return v.Run.Shown && v.Run.Run.ID != "" })
	if p := h.teacher.Started[0]; p.Method != ui.MethodDPO || p.Steps != 50 || p.LoRAPlusRatio != ui.DefaultLoRAPlusRatio || p.Base != "e2b" || !p.Source.Feedback {
		t.Fatalf("started %+v", p)
	}
	settle(h.harness, v)
	if !v.Start.Disabled() || !strings.Contains(v.Estimate.Text, "One run at a time") {
		t.Fatalf("a second run can start beside the first: %q", v.Estimate.Text)
	}
	run := v.Run.Run
	run.State, run.Steps = ui.RunTraining, 50
	for step := 1; step <= 30; step++ {
		run.Step, run.TokensPerSec, run.ETA = step, 812, time.Duration(50-step)*10*time.Second
		pt := ui.TrainPoint{Step: step, Loss: 0.69 - 0.01*float64(step), ValLoss: math.NaN(), Margin: 0.02 * float64(step)}
		if step == 30 { // the method names its chart's metric (train.Objective.Metrics)
			pt.MarginLabel = "reward (signed by label)"
		}
		if step%10 == 0 {
			pt.ValLoss = 0.7 - 0.01*float64(step)
		}
		h.teacher.Emit(ui.TrainUpdate{Run: run, Points: []ui.TrainPoint{pt}})
	}
	h.loop.Until(t, "30 points on the chart", func() bool { return v.Run.Loss.Len(0) == 30 })
	if v.Run.Loss.Len(1) != 3 || v.Run.Margin.Len(0) != 30 || !v.Run.Margin.Visible() {
		t.Fatalf("validation %d points, margin %d", v.Run.Loss.Len(1), v.Run.Margin.Len(0))
	}
	if v.Run.Margin.Title != "Reward (signed by label)" {
		t.Fatalf("margin chart titled %q, not by the method's label", v.Run.Margin.Title)
	}
	if got := v.Run.State.Text; got != "Training · step 30 of 50 · 812 tokens/s · about 3 min left" {
		t.Fatalf("state line %q", got)
	}
	if v.Run.Bar.Value != 0.6 || !v.Run.Pause.Visible() || v.Run.Resume.Visible() {
		t.Fatalf("bar %v pause %v resume %v", v.Run.Bar.Value, v.Run.Pause.Visible(), v.Run.Resume.Visible())
	}
	// A chat between steps shows as a pause for it.
	run.Yielding = true
	h.teacher.Emit(ui.TrainUpdate{Run: run})
	h.loop.Until(t, "the chat pause note", func() bool {
		return v.Run.Note.Visible() && strings.Contains(v.Run.Note.Text, "Paused while Perch answers your chat")
	})
	// Pause, resume, then stop through the confirmation.
	test.Tap(v.Run.Pause)
	h.loop.Until(t, "paused", func() bool { return v.Run.Run.State == ui.RunPaused && v.Run.Resume.Visible() })
	test.Tap(v.Run.Resume)
	h.loop.Until(t, "resumed", func() bool { return v.Run.Run.State == ui.RunTraining })
	test.Tap(v.Run.Stop)
	yes := findButton(h.ui.Main.Window.Canvas().Overlays().Top(), "Stop training")
	if yes == nil {
		t.Fatal("no confirmation for Stop")
	}
	test.Tap(yes)
	h.loop.Until(t, "stopped", func() bool { return v.Run.Run.State == ui.RunStopped })
	if got := strings.Join(h.teacher.Log(), ","); got != "pause r1,resume r1,stop r1" {
		t.Fatalf("controls sent %q", got)
	}
	if v.Run.Stop.Visible() || v.Run.Pause.Visible() || !strings.HasPrefix(v.Run.State.Text, "Stopped at step 30 of 50") {
		t.Fatalf("after stop: state %q", v.Run.State.Text)
	}
	if v.Run.Loss.Len(0) != 30 {
		t.Fatal("stopping lost the chart's points")
	}
}

// findButton finds the button labelled text under o.
func findButton(o fyne.CanvasObject, text string) *widget.Button {
	switch w := o.(type) {
	case *widget.Button:
		if w.Text == text {
			return w
		}
	case *fyne.Container:
		for _, c := range w.Objects {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(w).Objects() {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

func TestAdapterSwitchedOnInConversation(t *testing.T) {
	h := newTeachHarness(t, fake.Script{Deltas: fake.Words("Bonjour.")})
	mw := h.ui.Main
	answerOnce(h.harness, "Hello")
	conv := mw.chat.ConvID
	if mw.AdapterLabel() != "Gemma-4 E2B" {
		t.Fatalf("button %q", mw.AdapterLabel())
	}
	items := mw.adapterMenuItems()
	var labels []string
	for _, it := range items {
		labels = append(labels, it.Label)
	}
	// Only adapters made for this model are offered.
	if got := strings.Join(labels, "|"); got != "Gemma-4 E2B (no adapter)|Gemma-4 E2B + my-style||Models…|Teach…" {
		t.Fatalf("menu %q", got)
	}
	if !items[0].Checked || items[1].Checked {
		t.Fatal("the base model should be checked")
	}
	items[1].Action()
	if id, _ := h.feedback.Adapter(conv); id != "a1" {
		t.Fatalf("conversation adapter %q", id)
	}
	if mw.AdapterLabel() != "Gemma-4 E2B + my-style" {
		t.Fatalf("button %q", mw.AdapterLabel())
	}
	if !mw.adapterMenuItems()[1].Checked {
		t.Fatal("the adapter in use is not checked")
	}
	// Another conversation keeps its own choice; coming back shows this one.
	h.feedback.Adapters["other"] = ""
	h.chat.Convs = append(h.chat.Convs, ui.Conversation{ID: "other", Title: "Other"})
	mw.ShowConversation("other")
	if mw.AdapterLabel() != "Gemma-4 E2B" {
		t.Fatalf("other conversation shows %q", mw.AdapterLabel())
	}
	mw.ShowConversation(conv)
	if mw.AdapterLabel() != "Gemma-4 E2B + my-style" {
		t.Fatalf("back: %q", mw.AdapterLabel())
	}
	// Quick-ask names the choice new conversations take.
	q := h.ui.QuickAsk()
	q.Show()
	if q.Model.Text != "Gemma-4 E2B + my-style" {
		t.Fatalf("quick-ask shows %q", q.Model.Text)
	}
}
