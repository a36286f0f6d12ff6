package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// ToolAnswer is the user's answer on a tool-call card.
type ToolAnswer int

const (
	ToolDeny ToolAnswer = iota
	ToolAllowOnce
	ToolAllowAlways
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
	status   *widget.Label
	result   *widget.Label
	fold     *widget.Accordion
	OnAnswer func(ToolAnswer)
}

// NewToolCallCard returns a card waiting for an answer.
func NewToolCallCard(tool, server, arguments string) *ToolCallCard {
	c := &ToolCallCard{title: widget.NewLabel(fmt.Sprintf("%s wants to run %s (server %s)", "The model", tool, server)),
		args: widget.NewLabel(arguments), status: widget.NewLabel(""), result: widget.NewLabel("")}
	c.title.TextStyle.Bold = true
	c.title.Wrapping = fyne.TextWrapWord
	c.args.TextStyle.Monospace = true
	c.args.Wrapping = fyne.TextWrapBreak
	c.result.TextStyle.Monospace = true
	c.result.Wrapping = fyne.TextWrapBreak
	c.result.Selectable = true
	answer := func(a ToolAnswer) func() {
		return func() {
			c.buttons.Hide()
			if a == ToolDeny {
				c.status.SetText("Denied")
			} else {
				c.status.SetText("Running…")
			}
			c.status.Show()
			c.Root.Refresh()
			if c.OnAnswer != nil {
				c.OnAnswer(a)
			}
		}
	}
	allow := widget.NewButton("Allow once", answer(ToolAllowOnce))
	allow.Importance = widget.HighImportance
	c.buttons = container.NewHBox(allow, widget.NewButton("Always allow this tool", answer(ToolAllowAlways)),
		widget.NewButton("Deny", answer(ToolDeny)))
	c.fold = widget.NewAccordion(widget.NewAccordionItem("Result", c.result))
	c.fold.Hide()
	c.status.Hide()
	c.Root = container.NewVBox(c.title, c.args, c.buttons, c.status, c.fold)
	return c
}

// Waiting reports whether the card still asks.
func (c *ToolCallCard) Waiting() bool { return c.buttons.Visible() }

// SetResult shows the call's outcome, folded: the result text, an error,
// or "denied".
func (c *ToolCallCard) SetResult(content string, isError, denied bool) {
	c.buttons.Hide()
	switch {
	case denied:
		c.status.SetText("Denied: nothing ran")
	case isError:
		c.status.SetText("Failed")
	default:
		c.status.SetText("Done")
	}
	c.status.Show()
	c.result.SetText(content)
	c.fold.Show()
	c.fold.CloseAll()
	c.Root.Refresh()
}

// ToolServerRow is one MCP server in Settings → Tools.
type ToolServerRow struct {
	Name, State, Err, Stderr string
	Tools                    []string // "name — description"
}

// ToolServersView is Settings → Tools' list of servers: each with its
// state, its tools, and, when it failed, the reason with its stderr
// behind Details.
type ToolServersView struct {
	Root *fyne.Container
}

// NewToolServersView shows rows.
func NewToolServersView(rows []ToolServerRow) *ToolServersView {
	v := &ToolServersView{Root: container.NewVBox()}
	for _, r := range rows {
		head := widget.NewLabel(r.Name + " — " + r.State)
		head.TextStyle.Bold = true
		v.Root.Add(head)
		if r.Err != "" {
			p := newProblemBox()
			p.set(r.Err, r.Stderr)
			v.Root.Add(p.root)
		}
		for _, t := range r.Tools {
			l := widget.NewLabel("• " + t)
			l.Wrapping = fyne.TextWrapWord
			v.Root.Add(l)
		}
		v.Root.Add(widget.NewSeparator())
	}
	return v
}
