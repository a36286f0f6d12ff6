package look

import (
	"errors"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
)

// ProblemBox shows a failure: a wrapped sentence saying what went wrong and
// what to do, and, behind a closed "Details" disclosure, the raw error.
// Every line wraps (long words break), so no message can widen the window.
type ProblemBox struct {
	Root    *fyne.Container
	Summary *widget.Label
	details *widget.Label
	More    *widget.Accordion
}

func NewProblemBox() *ProblemBox {
	p := &ProblemBox{Summary: widget.NewLabel(""), details: widget.NewLabel("")}
	p.Summary.Wrapping = fyne.TextWrapWord
	p.Summary.Importance = widget.DangerImportance
	p.details.Wrapping = fyne.TextWrapBreak // raw errors hold long URLs and paths
	p.details.Selectable = true
	p.details.TextStyle.Monospace = true
	p.More = widget.NewAccordion(widget.NewAccordionItem("Details", p.details))
	icon := widget.NewIcon(theme.NewErrorThemedResource(theme.ErrorIcon()))
	p.Root = container.NewVBox(container.NewBorder(nil, nil, container.NewVBox(icon), nil, p.Summary), p.More)
	p.Root.Hide()
	return p
}

// Show puts err in words (a *Problem gives its own; any other error is shown
// as it is, with no details); nil hides the box.
func (p *ProblemBox) Show(err error) {
	if err == nil {
		p.Set("", "")
		return
	}
	var pr *ui.Problem
	if errors.As(err, &pr) {
		p.Set(pr.Summary, pr.Details)
		return
	}
	p.Set(err.Error(), "")
}

// Set shows summary, with details behind the disclosure ("" none); an empty
// summary hides the box.
func (p *ProblemBox) Set(summary, details string) {
	if summary == "" {
		p.Root.Hide()
		return
	}
	p.Summary.SetText(summary)
	p.details.SetText(details)
	p.More.CloseAll()
	if details == "" || details == summary {
		p.More.Hide()
	} else {
		p.More.Show()
	}
	p.Root.Show()
}
