package ui

import (
	"errors"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// problemBox shows a failure: a wrapped sentence saying what went wrong and
// what to do, and, behind a closed "Details" disclosure, the raw error.
// Every line wraps (long words break), so no message can widen the window.
type problemBox struct {
	root    *fyne.Container
	summary *widget.Label
	details *widget.Label
	more    *widget.Accordion
}

func newProblemBox() *problemBox {
	p := &problemBox{summary: widget.NewLabel(""), details: widget.NewLabel("")}
	p.summary.Wrapping = fyne.TextWrapWord
	p.summary.Importance = widget.DangerImportance
	p.details.Wrapping = fyne.TextWrapBreak // raw errors hold long URLs and paths
	p.details.Selectable = true
	p.details.TextStyle.Monospace = true
	p.more = widget.NewAccordion(widget.NewAccordionItem("Details", p.details))
	icon := widget.NewIcon(theme.NewErrorThemedResource(theme.ErrorIcon()))
	p.root = container.NewVBox(container.NewBorder(nil, nil, container.NewVBox(icon), nil, p.summary), p.more)
	p.root.Hide()
	return p
}

// show puts err in words (a *Problem gives its own; any other error is shown
// as it is, with no details); nil hides the box.
func (p *problemBox) show(err error) {
	if err == nil {
		p.set("", "")
		return
	}
	var pr *Problem
	if errors.As(err, &pr) {
		p.set(pr.Summary, pr.Details)
		return
	}
	p.set(err.Error(), "")
}

// set shows summary, with details behind the disclosure ("" none); an empty
// summary hides the box.
func (p *problemBox) set(summary, details string) {
	if summary == "" {
		p.root.Hide()
		return
	}
	p.summary.SetText(summary)
	p.details.SetText(details)
	p.more.CloseAll()
	if details == "" || details == summary {
		p.more.Hide()
	} else {
		p.more.Show()
	}
	p.root.Show()
}
