package window

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// sidebar is the conversation list: new, search by title, rename, delete.
type sidebar struct {
	env      *ui.Env
	win      fyne.Window
	search   *look.SearchEntry
	list     *widget.List
	items    []ui.Conversation
	selected string
	errText  *widget.Label

	onSelect func(id string)
	onNew    func()
	onDelete func(id string)
	root     fyne.CanvasObject
}

func newSidebar(e *ui.Env, win fyne.Window, nav fyne.CanvasObject) *sidebar {
	s := &sidebar{env: e, win: win}
	s.search = look.NewSearchEntry()
	s.search.SetPlaceHolder("Search chats  (" + ShortcutLabel(fyne.KeyK) + ")")
	s.search.ActionItem = widget.NewIcon(theme.SearchIcon())
	s.search.OnChanged = func(string) { s.reload() }
	s.search.OnEnter = s.openTop
	newBtn := widget.NewButtonWithIcon("New chat", theme.ContentAddIcon(), func() {
		if s.onNew != nil {
			s.onNew()
		}
	})
	newBtn.Importance = widget.HighImportance
	newBtn.Alignment = widget.ButtonAlignLeading
	s.errText = widget.NewLabel("")
	s.errText.Wrapping = fyne.TextWrapWord
	s.errText.Importance = widget.DangerImportance
	s.errText.Hide()
	s.list = widget.NewList(
		func() int { return len(s.items) },
		func() fyne.CanvasObject {
			title := widget.NewLabel("")
			title.Truncation = fyne.TextTruncateEllipsis
			when := sideNote()
			more := widget.NewButtonWithIcon("", theme.MoreHorizontalIcon(), nil)
			more.Importance = widget.LowImportance
			return container.NewBorder(nil, nil, nil, more, container.New(&look.TightVBox{}, title, container.NewPadded(when)))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(s.items) {
				return
			}
			c := s.items[i]
			row := o.(*fyne.Container)
			texts := row.Objects[0].(*fyne.Container)
			texts.Objects[0].(*widget.Label).SetText(c.Title)
			note := ago(c.Updated)
			if c.Snippet != "" {
				note = "“" + look.Clip(strings.Join(strings.Fields(c.Snippet), " "), 80) + "”"
			}
			setSideNote(texts.Objects[1].(*fyne.Container).Objects[0].(*widget.RichText), note)
			more := row.Objects[1].(*widget.Button)
			more.OnTapped = func() { s.showMenu(c, more) }
		})
	s.list.OnSelected = func(i widget.ListItemID) {
		if i < len(s.items) && s.items[i].ID != s.selected {
			s.selected = s.items[i].ID
			if s.onSelect != nil {
				s.onSelect(s.selected)
			}
		}
	}
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorSidebar))
	top := container.NewVBox(newBtn, s.search, s.errText)
	s.root = container.NewStack(bg, container.NewPadded(container.NewBorder(top, nav, nil, nil, s.list)))
	s.reload()
	return s
}

// reload reads the list again and keeps the selection.
func (s *sidebar) reload() {
	items, err := s.env.Chat.Conversations(strings.TrimSpace(s.search.Text))
	if err != nil {
		s.errText.SetText("Could not read your chats: " + err.Error())
		s.errText.Show()
		return
	}
	s.errText.Hide()
	s.items = items
	s.list.Refresh()
	s.markSelected()
}

// openTop opens the first conversation listed (Enter in search).
func (s *sidebar) openTop() {
	if len(s.items) == 0 || s.onSelect == nil {
		return
	}
	s.selected = s.items[0].ID
	s.markSelected()
	s.onSelect(s.selected)
}

// select_ highlights conversation id without calling onSelect.
func (s *sidebar) select_(id string) {
	s.selected = id
	s.markSelected()
}

func (s *sidebar) markSelected() {
	for i, c := range s.items {
		if c.ID == s.selected {
			s.list.Select(i)
			return
		}
	}
	s.list.UnselectAll()
}

func (s *sidebar) showMenu(c ui.Conversation, from fyne.CanvasObject) {
	menu := fyne.NewMenu("",
		fyne.NewMenuItem("Rename…", func() { s.rename(c) }),
		fyne.NewMenuItem("Delete…", func() { s.remove(c) }),
	)
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(from)
	widget.ShowPopUpMenuAtPosition(menu, s.win.Canvas(), pos.AddXY(0, from.Size().Height))
}

func (s *sidebar) rename(c ui.Conversation) {
	e := widget.NewEntry()
	e.SetText(c.Title)
	dialog.ShowForm("Rename chat", "Rename", "Cancel", []*widget.FormItem{widget.NewFormItem("Title", e)}, func(ok bool) {
		title := strings.TrimSpace(e.Text)
		if !ok || title == "" {
			return
		}
		if err := s.env.Chat.Rename(c.ID, title); err != nil {
			dialog.ShowError(err, s.win)
		}
		s.reload()
	}, s.win)
}

func (s *sidebar) remove(c ui.Conversation) {
	dialog.ShowConfirm("Delete this chat?", fmt.Sprintf("“%s” and its attachments will be removed.", look.Shorten(c.Title, 40)),
		func(ok bool) {
			if !ok {
				return
			}
			if err := s.env.Chat.Delete(c.ID); err != nil {
				dialog.ShowError(err, s.win)
				return
			}
			if s.onDelete != nil {
				s.onDelete(c.ID)
			}
			s.reload()
		}, s.win)
}

// ago is a short relative time: "now", "5 min", "3 h", "Tue", "12 Mar".
func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	case d < 7*24*time.Hour:
		return t.Format("Monday")
	}
	return t.Format("2 Jan 2006")
}

// sideNote is a row's second line (when, or the search hit): caption text
// cut with an ellipsis where the sidebar ends (a canvas.Text was cut bare).
func sideNote() *widget.RichText {
	r := widget.NewRichText(&widget.TextSegment{Style: widget.RichTextStyle{
		SizeName: theme.SizeNameCaptionText, ColorName: theme.ColorNamePlaceHolder, Inline: true}})
	r.Truncation = fyne.TextTruncateEllipsis
	return r
}

func setSideNote(r *widget.RichText, text string) {
	r.Segments[0].(*widget.TextSegment).Text = text
	r.Refresh()
}
