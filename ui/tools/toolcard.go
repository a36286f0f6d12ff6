package tools

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// ToolCallCard shows a call the model made (tool, server, arguments) and
// asks Allow once / Always allow / Deny; afterwards it shows the outcome
// folded under "Result". Arguments and results are plain text labels:
// nothing in them is rendered as Markdown or opens by itself.
type ToolCallCard struct {
	Root     *fyne.Container
	title    *widget.Label
	args     *widget.Label
	buttons  *fyne.Container
	Status   *widget.Label
	Result   *widget.Label
	Fold     *widget.Accordion
	OnAnswer func(ui.ToolAnswer)
}

// NewToolCallCard returns a card waiting for an answer.
func NewToolCallCard(tool, server, arguments string) *ToolCallCard {
	c := &ToolCallCard{title: widget.NewLabel(waitingTitle(tool, server)),
		args: widget.NewLabel(arguments), Status: widget.NewLabel(""), Result: widget.NewLabel("")}
	c.Status.Importance = widget.LowImportance
	c.title.TextStyle.Bold = true
	c.title.Wrapping = fyne.TextWrapWord
	c.args.TextStyle.Monospace = true
	c.args.Wrapping = fyne.TextWrapBreak
	c.Result.TextStyle.Monospace = true
	c.Result.Wrapping = fyne.TextWrapBreak
	c.Result.Selectable = true
	answer := func(a ui.ToolAnswer) func() {
		return func() {
			c.buttons.Hide()
			if a == ui.ToolDeny {
				c.Status.SetText("Denied")
			} else {
				c.Status.SetText("Running…")
			}
			c.Status.Show()
			c.Root.Refresh()
			if c.OnAnswer != nil {
				c.OnAnswer(a)
			}
		}
	}
	allow := widget.NewButton("Allow once", answer(ui.ToolAllowOnce))
	allow.Importance = widget.HighImportance
	c.buttons = container.NewHBox(allow, widget.NewButton("Always allow this tool", answer(ui.ToolAllowAlways)),
		widget.NewButton("Deny", answer(ui.ToolDeny)))
	c.Fold = widget.NewAccordion(widget.NewAccordionItem("Result", c.Result))
	c.Fold.Hide()
	c.Status.Hide()
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCode))
	bg.CornerRadius = 10
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	c.Root = container.NewStack(bg, container.NewPadded(container.NewVBox(c.title, c.args, c.buttons, c.Status, c.Fold)))
	return c
}

func waitingTitle(tool, server string) string {
	if server == "" {
		return fmt.Sprintf("The model asked for %s, which no server offers", tool)
	}
	return fmt.Sprintf("The model wants to run %s (server %s)", tool, server)
}

// show brings the card up to date with call tc of an answer; streaming
// says whether the answer is still going (a call with no outcome then
// runs; afterwards it was cut short).
func (c *ToolCallCard) show(tc ui.ToolCall, streaming bool) {
	name := tc.Tool
	if name == "" {
		name = tc.Name
	}
	title := waitingTitle(name, tc.Server)
	if !tc.Waiting() {
		title = fmt.Sprintf("%s (server %s)", name, tc.Server)
		if tc.Server == "" {
			title = name
		}
	}
	if c.title.Text != title {
		c.title.SetText(title)
	}
	if c.args.Text != tc.Arguments {
		c.args.SetText(tc.Arguments)
	}
	switch {
	case tc.Done:
		if c.Fold.Hidden || c.Result.Text != tc.Content || c.Status.Text != resultStatus(tc.IsError, tc.Denied)+preview(tc.Content, tc.Denied) {
			c.SetResult(tc.Content, tc.IsError, tc.Denied)
		}
		return
	case tc.Waiting():
		c.OnAnswer = tc.Ask
		c.buttons.Show()
		c.Status.Hide()
	default:
		c.buttons.Hide()
		c.Status.SetText("Stopped before it finished: no result")
		if streaming {
			c.Status.SetText("Running…")
		}
		c.Status.Show()
	}
	c.Root.Refresh()
}

// preview is the result's first line, short, after the status (the
// whole result stays folded under Result).
func preview(content string, denied bool) string {
	line, _, _ := strings.Cut(strings.TrimSpace(content), "\n")
	if denied || line == "" {
		return ""
	}
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	return " · " + line
}

func resultStatus(isError, denied bool) string {
	switch {
	case denied:
		return "Denied: nothing ran"
	case isError:
		return "Failed"
	}
	return "Done"
}

// Waiting reports whether the card still asks.
func (c *ToolCallCard) Waiting() bool { return c.buttons.Visible() }

// SetResult shows the call's outcome, folded: the result text, an error,
// or "denied".
func (c *ToolCallCard) SetResult(content string, isError, denied bool) {
	c.buttons.Hide()
	c.Status.SetText(resultStatus(isError, denied) + preview(content, denied))
	c.Status.Show()
	c.Result.SetText(content)
	c.Fold.Show()
	c.Fold.CloseAll()
	c.Root.Refresh()
}

// Cards shows an answer's tool calls, each as a card (with, before a
// round's first card, what the model said before calling). Cards are
// kept by position, so an answer streaming its calls updates them in place.
type Cards struct {
	Root  *fyne.Container
	Cards []*ToolCallCard
	Leads []*widget.Label
}

func NewCards() *Cards {
	t := &Cards{Root: container.NewVBox()}
	t.Root.Hide()
	return t
}

func (t *Cards) Show(calls []ui.ToolCall, streaming bool) {
	if len(calls) == 0 {
		if len(t.Cards) > 0 || t.Root.Visible() {
			t.Cards, t.Leads = nil, nil
			t.Root.Objects = nil
			t.Root.Hide()
		}
		return
	}
	for len(t.Cards) < len(calls) {
		t.Cards = append(t.Cards, NewToolCallCard("", "", ""))
		l := widget.NewLabel("")
		l.Wrapping = fyne.TextWrapWord
		t.Leads = append(t.Leads, l)
	}
	t.Cards, t.Leads = t.Cards[:len(calls)], t.Leads[:len(calls)]
	var objs []fyne.CanvasObject
	for i, c := range calls {
		if c.Lead != "" {
			if t.Leads[i].Text != c.Lead {
				t.Leads[i].SetText(c.Lead) // plain text: nothing in it is a link
			}
			objs = append(objs, t.Leads[i])
		}
		t.Cards[i].show(c, streaming)
		objs = append(objs, t.Cards[i].Root)
	}
	t.Root.Objects = objs
	t.Root.Show()
	t.Root.Refresh()
}
