package window

import (
	"strings"
	"testing"

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
