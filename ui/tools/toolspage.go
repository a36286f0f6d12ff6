package tools

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// Page is Settings → Tools: the user's MCP servers, each with its
// setup, state (the failure's reason, with the server's stderr behind
// Details), its tools and descriptions, and the tools it always allows;
// add, enable/disable, check, remove, revoke.
type Page struct {
	env    *ui.Env
	win    fyne.Window
	tools  ui.ToolSettings
	list   *fyne.Container
	status *widget.Label
	Root   fyne.CanvasObject
}

func NewPage(e *ui.Env, win fyne.Window) *Page {
	v := &Page{env: e, win: win, tools: e.Tools, list: container.NewVBox(), status: widget.NewLabel("")}
	v.status.Wrapping = fyne.TextWrapWord
	add := widget.NewButtonWithIcon("Add a server…", theme.ContentAddIcon(), v.showAdd)
	add.Importance = widget.HighImportance
	intro := look.Note("Tools let the model act for you through Model Context Protocol servers on this computer. " +
		"Nothing runs until you allow it: each call shows a card in the chat asking Allow once, Always allow or Deny.")
	body := container.NewVBox(look.Heading("Tools"), intro, container.NewHBox(add), v.status, v.list)
	v.Root = look.PageScroll(container.NewPadded(body))
	v.Reload()
	return v
}

// Reload shows the servers as they are now.
func (v *Page) Reload() {
	v.list.Objects = nil
	servers := v.tools.List()
	if len(servers) == 0 {
		v.list.Add(look.Note("No servers yet. Add one: a command such as npx -y @modelcontextprotocol/server-filesystem ~/Notes, or the URL of a server on this computer."))
	}
	for _, s := range servers {
		v.list.Add(v.serverCard(s))
	}
	v.list.Refresh()
}

// stateText is a server's state in words.
func stateText(s ui.ToolServerInfo) string {
	switch s.State {
	case "ready":
		return fmt.Sprintf("Ready · %d tools", len(s.Tools))
	case "starting":
		return "Starting…"
	case "failed":
		return "Failed"
	case "disabled":
		return "Off"
	}
	return "Not started (starts when a chat first needs it)"
}

func (v *Page) serverCard(s ui.ToolServerInfo) fyne.CanvasObject {
	name := widget.NewLabelWithStyle(s.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	state := widget.NewLabel(stateText(s))
	switch s.State {
	case "failed":
		state.Importance = widget.DangerImportance
	case "ready":
		state.Importance = widget.SuccessImportance
	default:
		state.Importance = widget.LowImportance
	}
	on := widget.NewCheck("Enabled", nil)
	on.SetChecked(s.Enabled)
	on.OnChanged = func(b bool) { v.act(func() error { return v.tools.SetEnabled(s.Name, b) }) }
	check := widget.NewButtonWithIcon("Check", theme.ViewRefreshIcon(), func() { v.check(s.Name) })
	check.Importance = widget.LowImportance
	if !s.Enabled {
		check.Disable()
	}
	remove := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
		dialog.ShowConfirm("Remove "+s.Name+"?", "Its setup and its \"always allow\" choices are forgotten.", func(ok bool) {
			if ok {
				v.act(func() error { return v.tools.Remove(s.Name) })
			}
		}, v.win)
	})
	remove.Importance = widget.LowImportance
	head := container.NewHBox(name, state)
	setup := widget.NewLabel(s.Setup)
	setup.TextStyle.Monospace = true
	setup.Wrapping = fyne.TextWrapBreak
	setup.Importance = widget.LowImportance
	rows := container.NewVBox(head, setup)
	if s.Err != "" {
		p := look.NewProblemBox()
		p.Set(s.Err, s.Stderr)
		rows.Add(p.Root)
	}
	if len(s.Tools) > 0 {
		// One text, a line a tool: compact, and never Markdown.
		var segs []widget.RichTextSegment
		for _, t := range s.Tools {
			segs = append(segs, &widget.TextSegment{Text: t.Name, Style: widget.RichTextStyle{Inline: true, TextStyle: fyne.TextStyle{Monospace: true}}},
				&widget.TextSegment{Text: "  " + oneLine(t.Description), Style: widget.RichTextStyle{Inline: t.Unchecked != "", ColorName: theme.ColorNamePlaceHolder}})
			if t.Unchecked != "" {
				segs = append(segs, &widget.TextSegment{Text: "  · arguments not checked: " + oneLine(t.Unchecked),
					Style: widget.RichTextStyle{ColorName: theme.ColorNameWarning}})
			}
		}
		l := widget.NewRichText(segs...)
		l.Wrapping = fyne.TextWrapWord
		rows.Add(l)
	}
	for _, tool := range s.Always {
		revoke := widget.NewButton("Revoke", func() { v.act(func() error { return v.tools.Revoke(s.Name, tool) }) })
		revoke.Importance = widget.LowImportance
		rows.Add(container.NewHBox(widget.NewIcon(theme.ConfirmIcon()), widget.NewLabel("Always allowed: "+tool), revoke))
	}
	rows.Add(container.NewHBox(on, check, remove)) // below, so a narrow window never clips it
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCode))
	bg.CornerRadius = 10
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	return container.NewVBox(container.NewStack(bg, container.NewPadded(rows)), layout.NewSpacer())
}

// oneLine is a tool's description on one line, at most 160 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// act runs a change and shows the list again, or why it failed.
func (v *Page) act(f func() error) {
	if err := f(); err != nil {
		v.status.SetText(err.Error())
		v.status.Importance = widget.DangerImportance
	} else {
		v.status.SetText("")
	}
	v.status.Refresh()
	v.Reload()
}

// check starts a server off the UI goroutine; the list shows it starting,
// then how it went.
func (v *Page) check(name string) {
	v.env.Run(func() {
		v.env.Do(v.Reload)
		v.tools.Check(context.Background(), name)
		v.env.Do(v.Reload)
	})
	v.Reload()
}

// showAdd asks for a new server: a name, then a command line with its
// environment (one NAME=value a line), or a URL on this computer.
func (v *Page) showAdd() {
	name := widget.NewEntry()
	name.SetPlaceHolder("notes")
	command := widget.NewEntry()
	command.SetPlaceHolder("npx -y @modelcontextprotocol/server-filesystem /Users/me/Notes")
	env := widget.NewMultiLineEntry()
	env.SetPlaceHolder("API_KEY=…  (one NAME=value a line; the server gets only these and PATH)")
	env.SetMinRowsVisible(2)
	url := widget.NewEntry()
	url.SetPlaceHolder("http://127.0.0.1:8080/mcp")
	form := dialog.NewForm("Add a tool server", "Add", "Cancel", []*widget.FormItem{
		widget.NewFormItem("Name", name),
		widget.NewFormItem("Command", command),
		widget.NewFormItem("Environment", env),
		widget.NewFormItem("Or URL", url),
	}, func(ok bool) {
		if !ok {
			return
		}
		vars, err := parseEnv(env.Text)
		if err == nil {
			err = v.tools.Add(strings.TrimSpace(name.Text), command.Text, vars, url.Text)
		}
		v.act(func() error { return err })
	}, v.win)
	form.Resize(fyne.NewSize(560, 360))
	form.Show()
}

// parseEnv reads NAME=value lines (blank lines skipped).
func parseEnv(text string) (map[string]string, error) {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%q is not NAME=value", line)
		}
		out[strings.TrimSpace(k)] = val
	}
	return out, nil
}
