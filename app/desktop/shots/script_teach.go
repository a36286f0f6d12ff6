//go:build screenshots

package shots

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"

	"perch/ui"
)

// scriptSteps are the scripted run's helpers (see script).
type scriptSteps struct {
	wait  func(what string, cond func() bool) bool
	shoot func(w fyne.Window, name string)
	fail  func(format string, args ...any)
}

// teachDemo is the Teach story, for make screenshot: feedback on a few
// answers (thumbs, corrections, a regeneration liked), a DPO run started
// from it on the Teach page, the page mid-run with its chart, the run
// done, then the adapter switched on in a new chat that answers with it.
func (g *gui) teachDemo(s scriptSteps) bool {
	mw := g.ui.Main
	do := fyne.DoAndWait
	ask := func(text string) bool {
		var busy bool
		do(func() { mw.SetDraft(text); mw.Submit(); busy = mw.Busy() })
		if !busy {
			s.fail("teach demo: %q was not sent", text)
			return false
		}
		return s.wait("the answer to "+text, func() bool { return !mw.Busy() })
	}
	act := func(what string, f func() error) bool {
		var err error
		do(func() { err = f() })
		if err != nil {
			s.fail("teach demo: %s: %v", what, err)
		}
		return err == nil
	}
	rated := func(r ui.Rating) func() bool {
		return func() bool { m, err := mw.LastAnswer(); return err == nil && m.Rating == r }
	}
	do(func() { mw.ShowConversation("") })
	// Corrections make pairs; a regeneration liked makes one too when it
	// says something else (a seeded run may say the same again).
	steps := []struct {
		q, fix string
		regen  bool
	}{
		{q: "Write a greeting for my team.", fix: "Good morning, team! Let's make today count."},
		{q: "Describe a perch in one line.", regen: true},
		{q: "How should I sign off an email?", fix: "Best wishes, and thanks for your time."},
		{q: "Say thank you to a colleague.", fix: "Thank you so much for your help this week!"},
	}
	var before string // the base model's first answer, to compare with the adapter's
	for i, st := range steps {
		if !ask(st.q) {
			return false
		}
		if i == 0 {
			do(func() { m, _ := mw.LastAnswer(); before = m.Text })
		}
		if !act("thumbs down", func() error { return mw.RateLast(ui.ThumbDown) }) ||
			!s.wait("the thumbs down", rated(ui.ThumbDown)) {
			return false
		}
		switch {
		case st.fix != "":
			if !act("correct", func() error { return mw.CorrectLast(st.fix) }) ||
				!s.wait("the correction", func() bool { m, _ := mw.LastAnswer(); return m.Edited }) {
				return false
			}
		case st.regen:
			if !act("regenerate", mw.RegenerateLast) || !s.wait("the new version", func() bool { return !mw.Busy() }) ||
				!act("thumbs up", func() error { return mw.RateLast(ui.ThumbUp) }) || !s.wait("the thumbs up", rated(ui.ThumbUp)) {
				return false
			}
		}
	}
	do(mw.ScrollChatToBottom)
	s.shoot(mw.Window, "teach-feedback.png")

	do(mw.ShowTeach)
	do(func() { mw.SetTeachSteps(60) })
	var problem string
	if !s.wait("the Teach page's check", func() bool {
		settled, ready, p := mw.TeachCheck()
		problem = p
		return settled && (ready || p != "")
	}) {
		return false
	}
	if _, ready, _ := mw.TeachCheck(); !ready {
		s.fail("teach demo: the Teach page refused to start: %s", problem)
		return false
	}
	do(mw.PressStartTraining)
	if !s.wait("the new run's card", func() bool { r, _ := mw.TeachRun(); return r.ID != "" }) {
		return false
	}
	s.shoot(mw.Window, "teach-started.png")
	if y := mw.TeachScroll(); y != 0 {
		s.fail("teach demo: after Start training the page stays %.0f px down, away from the run's card", y)
		return false
	}
	if !s.wait("several points on the chart", func() bool {
		r, n := mw.TeachRun()
		return n >= 8 || (r.ID != "" && !r.State.Active())
	}) {
		return false
	}
	do(func() { mw.ScrollTeachTo(false) })
	s.shoot(mw.Window, "teach-running.png")
	if r, n := mw.TeachRun(); !r.State.Active() || n < 8 {
		s.fail("teach demo: the run was not going with several points when shot (%s, %d points): %s", r.State, n, r.Err)
		return false
	}
	if !s.wait("the run to finish", func() bool { r, _ := mw.TeachRun(); return !r.State.Active() }) {
		return false
	}
	r, n := mw.TeachRun()
	if r.State != ui.RunDone || r.AdapterID == "" {
		s.fail("teach demo: the run ended %s: %s", r.State, r.Err)
		return false
	}
	time.Sleep(300 * time.Millisecond) // the adapters list reloads
	do(func() { mw.ScrollTeachTo(true) })
	s.shoot(mw.Window, "teach-done.png")
	fmt.Printf("perch: teach run done: %d steps, %d points, adapter %s\n", r.Step, n, r.AdapterID)

	do(func() { mw.ShowConversation(""); mw.UseAdapter(r.AdapterID); mw.OpenModelMenu() })
	s.shoot(mw.Window, "teach-adapter-menu.png")
	do(mw.CloseOverlays)
	if !ask("Write a greeting for my team.") {
		return false
	}
	// The header learns that the adapter is loaded from the model's state
	// (a watcher, then a UI refresh): it may still say "loading…" as the
	// answer ends, so wait for it to name the model that answered.
	var m ui.Message
	var label string
	if !s.wait("the header to name the model that answered", func() bool {
		m, _ = mw.LastAnswer()
		label = mw.AdapterLabel()
		return m.Model != "" && label == m.Model
	}) || m.State != ui.Done || m.Text == "" {
		s.fail("teach demo: the answer with the adapter (state %q, by %q, header %q): %s", m.State, m.Model, label, m.Err)
		return false
	}
	s.shoot(mw.Window, "teach-adapter-chat.png")
	fmt.Printf("perch: answered by %s: %q (the base model said %q)\n", m.Model, clipText(m.Text), clipText(before))
	if m.Text == before {
		s.fail("teach demo: the adapter did not change the answer to the same question with the same seed")
		return false
	}
	return true
}

func clipText(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
