package tools

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
)

// Switch is the chat header's per-conversation switch of which
// servers' tools the model sees: a button saying how many are on, whose
// menu ticks them on and off. Hidden without servers.
type Switch struct {
	tc     ui.ToolChats
	Btn    *widget.Button
	convID func() string
}

func NewSwitch(tc ui.ToolChats, convID func() string) *Switch {
	t := &Switch{tc: tc, convID: convID}
	t.Btn = widget.NewButtonWithIcon("Tools", theme.SettingsIcon(), t.showMenu)
	t.Btn.Importance = widget.LowImportance
	t.Btn.Hide()
	return t
}

// Refresh shows how many servers the conversation uses.
func (t *Switch) Refresh() {
	servers, err := t.tc.ToolServers(t.convID())
	if err != nil || len(servers) == 0 {
		t.Btn.Hide()
		return
	}
	on := 0
	for _, s := range servers {
		if s.On {
			on++
		}
	}
	t.Btn.SetText(fmt.Sprintf("Tools %d/%d", on, len(servers)))
	t.Btn.Show()
}

// Items are the servers as ticked menu items; choosing one flips it.
func (t *Switch) Items() []*fyne.MenuItem {
	servers, _ := t.tc.ToolServers(t.convID())
	var items []*fyne.MenuItem
	for _, s := range servers {
		it := fyne.NewMenuItem(s.Name, func() {
			t.tc.SetToolServer(t.convID(), s.Name, !s.On)
			t.Refresh()
		})
		it.Checked = s.On
		items = append(items, it)
	}
	return items
}

func (t *Switch) showMenu() {
	c := fyne.CurrentApp().Driver().CanvasForObject(t.Btn)
	if c == nil {
		return
	}
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(t.Btn).AddXY(0, t.Btn.Size().Height)
	widget.ShowPopUpMenuAtPosition(fyne.NewMenu("", t.Items()...), c, pos)
}
