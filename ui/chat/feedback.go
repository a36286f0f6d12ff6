package chat

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// Feedback on answers: thumbs up/down and "this is what it should have
// said" corrections. Both are stored by the Feedback service with the
// answer's version, and become training data on the Teach page.

// feedbackButtons are an answer's rating and correction buttons (none
// when the app has no Feedback service).
func (v *MessageView) feedbackButtons(m ui.Message) []fyne.CanvasObject {
	if v.Acts.Rate == nil || m.State == ui.Streaming || m.State == ui.Failed {
		return nil
	}
	rating := func(r ui.Rating, off, on fyne.Resource, tip string) fyne.CanvasObject {
		icon := off
		if m.Rating == r {
			icon = on
		}
		return look.NewTipButton("", icon, tip, v.Acts.tips, func() {
			next := r
			if v.Msg.Rating == r {
				next = ui.Unrated // a second tap takes the rating back
			}
			v.Acts.Rate(v.Msg, next)
		})
	}
	out := []fyne.CanvasObject{
		rating(ui.ThumbUp, look.ThumbUpIcon, look.ThumbUpChosen, "A good answer: Teach can learn to answer like it"),
		rating(ui.ThumbDown, look.ThumbDownIcon, look.ThumbDownChosen, "A poor answer: correct it or regenerate, and Teach learns from the difference"),
	}
	if v.Acts.Correct != nil {
		// Worded, not the edit pencil alone: this corrects the answer.
		out = append(out, look.NewTipButton("Correct", theme.DocumentCreateIcon(),
			"Write what the answer should have said: Teach learns from corrections", v.Acts.tips, v.startCorrect))
	}
	if m.Edited {
		out = append(out, container.NewCenter(look.Caption("your correction")))
	}
	return out
}

// setRating shows a new rating at once (the service stores it meanwhile).
func (v *MessageView) setRating(r ui.Rating) {
	m := v.Msg
	m.Rating = r
	v.Update(m)
}

// startCorrect swaps the answer's text for an editor: what it should have
// said. Saving keeps the original as an earlier version.
func (v *MessageView) startCorrect() {
	v.Editing = true
	e := widget.NewMultiLineEntry()
	shown := look.ShownText(v.Msg.Text) // what the answer shows, without the tokens it hides
	e.SetText(shown)
	e.Wrapping = fyne.TextWrapWord
	e.SetMinRowsVisible(4)
	hint := look.Caption("Write what the answer should have said. Perch keeps the original and learns from the difference.")
	finish := func() {
		v.Editing = false
		v.Update(v.Msg)
	}
	save := widget.NewButtonWithIcon("Save correction", theme.ConfirmIcon(), func() {
		text := strings.TrimSpace(e.Text)
		if text == "" || text == shown {
			finish()
			return
		}
		finish()
		v.Acts.Correct(v.Msg, text)
	})
	save.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", finish)
	v.Body.Objects = []fyne.CanvasObject{hint, e, container.NewHBox(layout.NewSpacer(), cancel, save)}
	v.Body.Refresh()
	v.takeKeys(e)
}

// feedbackActions are the rate and correct actions of answers in
// conversation convID() (nil without a Feedback service).
func feedbackActions(e *ui.Env, convID func() string, notice func(string), view func(id string) *MessageView) (
	rate func(ui.Message, ui.Rating), correct func(ui.Message, string)) {
	if e.Feedback == nil {
		return nil, nil
	}
	rate = func(m ui.Message, r ui.Rating) {
		mv := view(m.ID)
		if mv == nil {
			return
		}
		before := mv.Msg.Rating
		mv.setRating(r)
		id := convID()
		e.Run(func() {
			if err := e.Feedback.Rate(id, m.ID, r); err != nil {
				e.Do(func() {
					mv.setRating(before)
					notice("Could not save your rating: " + err.Error())
				})
			}
		})
	}
	correct = func(m ui.Message, text string) {
		id := convID()
		e.Run(func() {
			got, err := e.Feedback.Correct(id, m.ID, text)
			e.Do(func() {
				if err != nil {
					notice("Could not save your correction: " + err.Error())
					return
				}
				if mv := view(m.ID); mv != nil {
					mv.Update(got)
				}
			})
		})
	}
	return rate, correct
}

// viewByID finds the message view of id among vs.
func viewByID(vs []*MessageView, id string) *MessageView {
	for _, mv := range vs {
		if mv.Msg.ID == id {
			return mv
		}
	}
	return nil
}
