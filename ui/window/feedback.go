package window

import (
	"perch/ui"
	"perch/ui/look"

	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Feedback on answers: thumbs up/down and "this is what it should have
// said" corrections. Both are stored by the Feedback service with the
// answer's version, and become training data on the Teach page.

// feedbackButtons are an answer's rating and correction buttons (none
// when the app has no Feedback service).
func (v *messageView) feedbackButtons(m ui.Message) []fyne.CanvasObject {
	if v.acts.rate == nil || m.State == ui.Streaming || m.State == ui.Failed {
		return nil
	}
	rating := func(r ui.Rating, off, on fyne.Resource, tip string) fyne.CanvasObject {
		icon := off
		if m.Rating == r {
			icon = on
		}
		return look.NewTipButton("", icon, tip, v.acts.tips, func() {
			next := r
			if v.msg.Rating == r {
				next = ui.Unrated // a second tap takes the rating back
			}
			v.acts.rate(v.msg, next)
		})
	}
	out := []fyne.CanvasObject{
		rating(ui.ThumbUp, look.ThumbUpIcon, look.ThumbUpChosen, "A good answer: Teach can learn to answer like it"),
		rating(ui.ThumbDown, look.ThumbDownIcon, look.ThumbDownChosen, "A poor answer: correct it or regenerate, and Teach learns from the difference"),
	}
	if v.acts.correct != nil {
		// Worded, not the edit pencil alone: this corrects the answer.
		out = append(out, look.NewTipButton("Correct", theme.DocumentCreateIcon(),
			"Write what the answer should have said: Teach learns from corrections", v.acts.tips, v.startCorrect))
	}
	if m.Edited {
		out = append(out, container.NewCenter(look.Caption("your correction")))
	}
	return out
}

// setRating shows a new rating at once (the service stores it meanwhile).
func (v *messageView) setRating(r ui.Rating) {
	m := v.msg
	m.Rating = r
	v.update(m)
}

// startCorrect swaps the answer's text for an editor: what it should have
// said. Saving keeps the original as an earlier version.
func (v *messageView) startCorrect() {
	v.editing = true
	e := widget.NewMultiLineEntry()
	shown := look.ShownText(v.msg.Text) // what the answer shows, without the tokens it hides
	e.SetText(shown)
	e.Wrapping = fyne.TextWrapWord
	e.SetMinRowsVisible(4)
	hint := look.Caption("Write what the answer should have said. Perch keeps the original and learns from the difference.")
	finish := func() {
		v.editing = false
		v.update(v.msg)
	}
	save := widget.NewButtonWithIcon("Save correction", theme.ConfirmIcon(), func() {
		text := strings.TrimSpace(e.Text)
		if text == "" || text == shown {
			finish()
			return
		}
		finish()
		v.acts.correct(v.msg, text)
	})
	save.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", finish)
	v.body.Objects = []fyne.CanvasObject{hint, e, container.NewHBox(layout.NewSpacer(), cancel, save)}
	v.body.Refresh()
	v.takeKeys(e)
}

// feedbackActions are the rate and correct actions of answers in
// conversation convID() (nil without a Feedback service).
func feedbackActions(e *env, convID func() string, notice func(string), view func(id string) *messageView) (
	rate func(ui.Message, ui.Rating), correct func(ui.Message, string)) {
	if e.feedback == nil {
		return nil, nil
	}
	rate = func(m ui.Message, r ui.Rating) {
		mv := view(m.ID)
		if mv == nil {
			return
		}
		before := mv.msg.Rating
		mv.setRating(r)
		id := convID()
		e.run(func() {
			if err := e.feedback.Rate(id, m.ID, r); err != nil {
				e.do(func() {
					mv.setRating(before)
					notice("Could not save your rating: " + err.Error())
				})
			}
		})
	}
	correct = func(m ui.Message, text string) {
		id := convID()
		e.run(func() {
			got, err := e.feedback.Correct(id, m.ID, text)
			e.do(func() {
				if err != nil {
					notice("Could not save your correction: " + err.Error())
					return
				}
				if mv := view(m.ID); mv != nil {
					mv.update(got)
				}
			})
		})
	}
	return rate, correct
}

// viewByID finds the message view of id among vs.
func viewByID(vs []*messageView, id string) *messageView {
	for _, mv := range vs {
		if mv.msg.ID == id {
			return mv
		}
	}
	return nil
}
