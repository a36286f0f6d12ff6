package window

import (
	"perch/ui"

	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// toolSwitch is the chat header's per-conversation switch of which
// servers' tools the model sees: a button saying how many are on, whose
// menu ticks them on and off. Hidden without servers.
type toolSwitch struct {
	tc     ui.ToolChats
	btn    *widget.Button
	convID func() string
}

func newToolSwitch(tc ui.ToolChats, convID func() string) *toolSwitch {
	t := &toolSwitch{tc: tc, convID: convID}
	t.btn = widget.NewButtonWithIcon("Tools", theme.SettingsIcon(), t.showMenu)
	t.btn.Importance = widget.LowImportance
	t.btn.Hide()
	return t
}

// refresh shows how many servers the conversation uses.
func (t *toolSwitch) refresh() {
	servers, err := t.tc.ToolServers(t.convID())
	if err != nil || len(servers) == 0 {
		t.btn.Hide()
		return
	}
	on := 0
	for _, s := range servers {
		if s.On {
			on++
		}
	}
	t.btn.SetText(fmt.Sprintf("Tools %d/%d", on, len(servers)))
	t.btn.Show()
}

// items are the servers as ticked menu items; choosing one flips it.
func (t *toolSwitch) items() []*fyne.MenuItem {
	servers, _ := t.tc.ToolServers(t.convID())
	var items []*fyne.MenuItem
	for _, s := range servers {
		it := fyne.NewMenuItem(s.Name, func() {
			t.tc.SetToolServer(t.convID(), s.Name, !s.On)
			t.refresh()
		})
		it.Checked = s.On
		items = append(items, it)
	}
	return items
}

func (t *toolSwitch) showMenu() {
	c := fyne.CurrentApp().Driver().CanvasForObject(t.btn)
	if c == nil {
		return
	}
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(t.btn).AddXY(0, t.btn.Size().Height)
	widget.ShowPopUpMenuAtPosition(fyne.NewMenu("", t.items()...), c, pos)
}
