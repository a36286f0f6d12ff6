package window

import (
	"perch/ui"
	"perch/ui/look"

	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// answerOnce sends text in the main window and waits for the answer.
func answerOnce(h *harness, text string) *messageView {
	mw := h.ui.Main
	mw.SetDraft(text)
	mw.Submit()
	h.loop.until(h.t, "the answer", func() bool { return !mw.Busy() })
	return lastView(h)
}

// feedbackButton is an answer's button showing icon res (nil when absent).
func feedbackButton(v *messageView, res ...fyne.Resource) *widget.Button {
	for _, o := range v.actions.Objects {
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
	h := newTeachHarness(t, script{deltas: words("Paris.")})
	v := answerOnce(h.harness, "Capital of France?")
	id := v.msg.ID
	up := feedbackButton(v, look.ThumbUpIcon)
	if up == nil || feedbackButton(v, look.ThumbDownIcon) == nil {
		t.Fatal("an answer has no thumbs")
	}
	test.Tap(up)
	h.loop.until(t, "the rating stored", func() bool { return h.feedback.rating(id) == ui.ThumbUp })
	if feedbackButton(v, look.ThumbUpChosen) == nil || v.msg.Rating != ui.ThumbUp {
		t.Fatal("thumbs up not shown as chosen")
	}
	test.Tap(feedbackButton(v, look.ThumbDownIcon))
	h.loop.until(t, "thumbs down stored", func() bool { return h.feedback.rating(id) == ui.ThumbDown })
	if feedbackButton(v, look.ThumbUpIcon) == nil || feedbackButton(v, look.ThumbDownChosen) == nil {
		t.Fatal("switching to thumbs down did not show")
	}
	test.Tap(feedbackButton(v, look.ThumbDownChosen)) // a second tap takes it back
	h.loop.until(t, "rating cleared", func() bool { return h.feedback.rating(id) == ui.Unrated })
	// The user's own turns take no thumbs.
	if feedbackButton(h.ui.Main.chat.views[0], look.ThumbUpIcon, look.ThumbUpChosen) != nil {
		t.Fatal("a user message has thumbs")
	}

	// Quick-ask answers take them too.
	q := h.ui.QuickAsk()
	q.Show()
	q.SetDraft("And Spain?")
	q.Submit()
	h.loop.until(t, "the quick answer", func() bool { return !q.Busy() })
	qa, _ := q.Answer()
	b := feedbackButton(q.last, look.ThumbDownIcon)
	if b == nil {
		t.Fatal("quick-ask answer has no thumbs")
	}
	test.Tap(b)
	h.loop.until(t, "quick-ask rating stored", func() bool { return h.feedback.rating(qa.ID) == ui.ThumbDown })
}

func TestCorrectionSavedAsNewVersion(t *testing.T) {
	h := newTeachHarness(t, script{deltas: words("The capital is Lyon.")})
	v := answerOnce(h.harness, "Capital of France?")
	test.Tap(feedbackButton(v, look.ThumbDownIcon))
	fix := feedbackButton(v, theme.DocumentCreateIcon())
	if fix == nil {
		t.Fatal("no correct button")
	}
	test.Tap(fix)
	ed, ok := v.body.Objects[1].(*widget.Entry)
	if !ok || ed.Text != "The capital is Lyon." {
		t.Fatalf("correction editor not shown: %T", v.body.Objects[1])
	}
	ed.SetText("The capital of France is Paris.")
	save := v.body.Objects[2].(*fyne.Container).Objects[2].(*widget.Button)
	test.Tap(save)
	h.loop.until(t, "the correction", func() bool { return v.msg.Edited })
	if got := h.feedback.fixes[v.msg.ID]; got != "The capital of France is Paris." {
		t.Fatalf("stored correction %q", got)
	}
	if got := renderedText(v); got != "The capital of France is Paris." {
		t.Fatalf("shown %q", got)
	}
	if !strings.Contains(strings.Join(texts(v.root), "|"), "your correction") {
		t.Fatal("the corrected answer is not marked as the user's")
	}
}

// texts collects the text of every label, button and canvas text under o.
func texts(o fyne.CanvasObject) []string {
	var out []string
	switch w := o.(type) {
	case *fyne.Container:
		for _, c := range w.Objects {
			out = append(out, texts(c)...)
		}
	case *widget.Label:
		out = append(out, w.Text)
	case *widget.Button:
		out = append(out, w.Text)
	case *canvas.Text:
		out = append(out, w.Text)
	case *widget.Check:
		out = append(out, w.Text)
	case fyne.Widget:
		r := test.WidgetRenderer(w)
		for _, c := range r.Objects() {
			out = append(out, texts(c)...)
		}
	}
	return out
}

// openTeach shows the Teach page and waits for its checks to settle.
func openTeach(h *teachHarness) *teachView {
	h.ui.Main.ShowTeach()
	v := h.ui.Main.teach
	settle(h.harness, v)
	return v
}

// settle waits until the newest form check has come back.
func settle(h *harness, v *teachView) {
	h.loop.until(h.t, "the Teach page's check", func() bool { return v.checked == v.checking.Load() })
}

func TestTeachRefusesNothingToTrainOn(t *testing.T) {
	h := newTeachHarness(t)
	h.teacher.summary = ui.DataSummary{Examples: 3, Unpaired: 2}
	v := openTeach(h)
	if v.selectedMethod() != ui.MethodDPO {
		t.Fatalf("default method %q", v.selectedMethod())
	}
	if !v.problem.Visible() || !strings.Contains(v.problem.Text, "2 disliked answers have no better version") ||
		!strings.Contains(v.problem.Text, `switch to "Examples (SFT)"`) {
		t.Fatalf("problem = %q (visible %v)", v.problem.Text, v.problem.Visible())
	}
	if !v.start.Disabled() {
		t.Fatal("Start enabled with nothing to train on")
	}
	if v.dataInfo.Text != "3 examples · 0 pairs · 2 dislikes without a better version" {
		t.Fatalf("data line %q", v.dataInfo.Text)
	}
	// Examples are enough for SFT.
	v.method.SetSelected(presetFor(ui.MethodSFT).Label)
	settle(h.harness, v)
	if v.problem.Visible() || v.start.Disabled() {
		t.Fatalf("SFT with 3 examples refused: %q", v.problem.Text)
	}
	if !strings.Contains(v.estimate.Text, "About 7 min · needs 3.0 GB of the 16.0 GB") {
		t.Fatalf("estimate %q", v.estimate.Text)
	}
	if v.fields["steps"].Text != "20" { // about three passes over 3 rows, at least 20
		t.Fatalf("suggested steps %q", v.fields["steps"].Text)
	}
	if v.fields["lr"].Text != fmt.Sprint(presetFor(ui.MethodSFT).LR) {
		t.Fatalf("SFT's learning rate did not follow the preset: %q", v.fields["lr"].Text)
	}
	// No source at all, and bad numbers, are named.
	v.fromFeedback.SetChecked(false)
	v.fields["ratio"].SetText("0.5")
	settle(h.harness, v)
	if !strings.Contains(v.problem.Text, "choose what to learn from") || !strings.Contains(v.problem.Text, "LoRA+ ratio must be a number from 1") {
		t.Fatalf("problem = %q", v.problem.Text)
	}
	if !v.start.Disabled() {
		t.Fatal("Start enabled without a source")
	}
}

func TestTeachRefusesWhenItWillNotFit(t *testing.T) {
	h := newTeachHarness(t)
	h.teacher.summary = ui.DataSummary{Pairs: 4}
	h.teacher.estimate = ui.TrainEstimate{Fits: false, Memory: 30 << 30, Available: 16 << 30,
		Reason: "Training Gemma-4 E2B this way needs about 30.0 GB and this computer can give 16.0 GB. Try a maximum length of 1024."}
	v := openTeach(h)
	if !v.problem.Visible() || !strings.HasPrefix(v.problem.Text, "Training Gemma-4 E2B this way needs about 30.0 GB") {
		t.Fatalf("problem = %q", v.problem.Text)
	}
	if !v.start.Disabled() {
		t.Fatal("Start enabled for a plan that does not fit")
	}
}

func TestTeachRunChartUpdatesAndStops(t *testing.T) {
	h := newTeachHarness(t)
	h.teacher.summary = ui.DataSummary{Pairs: 6, Examples: 2,
		Preview: []ui.DataPreview{{Prompt: "Capital?", Chosen: "Paris.", Rejected: "Lyon.", Origin: "your correction"}}}
	v := openTeach(h)
	if v.start.Disabled() {
		t.Fatalf("cannot start: %q", v.problem.Text)
	}
	v.fields["steps"].SetText("50")
	settle(h.harness, v)
	test.Tap(v.start)
	h.loop.until(t, "the run shown", func() bool { return v.run.shown && v.run.run.ID != "" })
	if p := h.teacher.started[0]; p.Method != ui.MethodDPO || p.Steps != 50 || p.LoRAPlusRatio != ui.DefaultLoRAPlusRatio || p.Base != "e2b" || !p.Source.Feedback {
		t.Fatalf("started %+v", p)
	}
	settle(h.harness, v)
	if !v.start.Disabled() || !strings.Contains(v.estimate.Text, "One run at a time") {
		t.Fatalf("a second run can start beside the first: %q", v.estimate.Text)
	}
	run := v.run.run
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
		h.teacher.emit(ui.TrainUpdate{Run: run, Points: []ui.TrainPoint{pt}})
	}
	h.loop.until(t, "30 points on the chart", func() bool { return v.run.loss.Len(0) == 30 })
	if v.run.loss.Len(1) != 3 || v.run.margin.Len(0) != 30 || !v.run.margin.Visible() {
		t.Fatalf("validation %d points, margin %d", v.run.loss.Len(1), v.run.margin.Len(0))
	}
	if v.run.margin.Title != "Reward (signed by label)" {
		t.Fatalf("margin chart titled %q, not by the method's label", v.run.margin.Title)
	}
	if got := v.run.state.Text; got != "Training · step 30 of 50 · 812 tokens/s · about 3 min left" {
		t.Fatalf("state line %q", got)
	}
	if v.run.bar.Value != 0.6 || !v.run.pause.Visible() || v.run.resume.Visible() {
		t.Fatalf("bar %v pause %v resume %v", v.run.bar.Value, v.run.pause.Visible(), v.run.resume.Visible())
	}
	// A chat between steps shows as a pause for it.
	run.Yielding = true
	h.teacher.emit(ui.TrainUpdate{Run: run})
	h.loop.until(t, "the chat pause note", func() bool {
		return v.run.note.Visible() && strings.Contains(v.run.note.Text, "Paused while Perch answers your chat")
	})
	// Pause, resume, then stop through the confirmation.
	test.Tap(v.run.pause)
	h.loop.until(t, "paused", func() bool { return v.run.run.State == ui.RunPaused && v.run.resume.Visible() })
	test.Tap(v.run.resume)
	h.loop.until(t, "resumed", func() bool { return v.run.run.State == ui.RunTraining })
	test.Tap(v.run.stop)
	yes := findButton(h.ui.Main.Window.Canvas().Overlays().Top(), "Stop training")
	if yes == nil {
		t.Fatal("no confirmation for Stop")
	}
	test.Tap(yes)
	h.loop.until(t, "stopped", func() bool { return v.run.run.State == ui.RunStopped })
	if got := strings.Join(h.teacher.log(), ","); got != "pause r1,resume r1,stop r1" {
		t.Fatalf("controls sent %q", got)
	}
	if v.run.stop.Visible() || v.run.pause.Visible() || !strings.HasPrefix(v.run.state.Text, "Stopped at step 30 of 50") {
		t.Fatalf("after stop: state %q", v.run.state.Text)
	}
	if v.run.loss.Len(0) != 30 {
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
	h := newTeachHarness(t, script{deltas: words("Bonjour.")})
	mw := h.ui.Main
	answerOnce(h.harness, "Hello")
	conv := mw.chat.convID
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
	h.feedback.adapters["other"] = ""
	h.chat.convs = append(h.chat.convs, ui.Conversation{ID: "other", Title: "Other"})
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
	if q.model.Text != "Gemma-4 E2B + my-style" {
		t.Fatalf("quick-ask shows %q", q.model.Text)
	}
}

func TestAdaptersListed(t *testing.T) {
	h := newTeachHarness(t)
	v := openTeach(h)
	all := strings.Join(texts(v.adapters.root), "|")
	for _, want := range []string{"my-style", "DPO on Gemma-4 E2B", "200 steps", "best validation loss 1.234 (checkpoint at step 150)", "rank 8", "12.0 MB", "legal", "for Gemma-4 31B"} {
		if !strings.Contains(all, want) {
			t.Fatalf("adapters list lacks %q: %s", want, all)
		}
	}
}
