package window

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"perch/ui"
)

// tray is the menubar (system tray) menu.
type tray struct {
	app    desktop.App
	icon   fyne.Resource
	train  *fyne.MenuItem // the run going on; nil when none
	menu   *fyne.Menu
	quick  *fyne.MenuItem
	model  *fyne.MenuItem
	unload *fyne.MenuItem
}

// TrayActions are what the menubar items do.
type TrayActions struct {
	QuickAsk func()
	Open     func()
	Settings func()
	Quit     func()
}

// InstallTray puts Perch's icon and menu in the menubar; hotkey is the
// shortcut already active ("" none yet: SetHotkey tells). It returns false
// when the platform has no tray API; a tray host that is missing at run
// time (a Linux session without one) only logs, it never fails.
func (u *UI) InstallTray(icon fyne.Resource, hotkey string, acts TrayActions) bool {
	da, ok := u.env.App.(desktop.App)
	if !ok {
		return false
	}
	t := &tray{app: da, icon: icon}
	t.quick = fyne.NewMenuItem("Quick Ask…", acts.QuickAsk)
	t.model = fyne.NewMenuItem("", nil)
	t.model.Disabled = true
	t.unload = fyne.NewMenuItem("", nil)
	quit := fyne.NewMenuItem("Quit Perch", acts.Quit)
	quit.IsQuit = true
	t.menu = fyne.NewMenu("Perch",
		t.quick,
		fyne.NewMenuItem("Open Perch", acts.Open),
		fyne.NewMenuItemSeparator(),
		t.model,
		t.unload,
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Settings…", acts.Settings),
		fyne.NewMenuItemSeparator(),
		quit,
	)
	u.tray = t
	t.setHotkey(hotkey)
	t.setModel(u.env.Model.State(), u.env.Model)
	da.SetSystemTrayIcon(icon)
	da.SetSystemTrayMenu(t.menu)
	u.env.Model.Watch(func(s ui.ModelState) {
		u.env.Do(func() {
			t.setModel(s, u.env.Model)
			t.menu.Refresh()
		})
	})
	return true
}

// SetHotkey says which quick-ask shortcut is really active ("" none, with
// why in err): the menu item shows it, and Settings says whether the one
// chosen works.
func (u *UI) SetHotkey(active string, err error) {
	u.env.HotkeyActive, u.env.HotkeyErr = active, err
	if u.tray != nil {
		u.tray.setHotkey(active)
		u.tray.menu.Refresh()
	}
	if s := u.Main.settings; s != nil {
		s.ShowHotkeyState()
	}
}

// setHotkey shows the active shortcut beside the menu item ("" none).
func (t *tray) setHotkey(hotkey string) {
	t.quick.Label = "Quick Ask…"
	if h, err := ui.ParseHotkey(hotkey); err == nil && hotkey != "" {
		t.quick.Label += "    " + h.Label()
	}
}

func (t *tray) setModel(s ui.ModelState, m ui.Model) {
	switch {
	case s.ID == "":
		t.model.Label = "No model yet"
	case s.Err != "":
		t.model.Label = s.Name + ": failed to load"
	case s.Loading:
		t.model.Label = s.Name + ": loading…"
	case s.Loaded:
		t.model.Label = s.Name + ": ready"
	default:
		t.model.Label = s.Name + ": not loaded"
	}
	if s.Loaded || s.Loading {
		t.unload.Label = "Unload model (free memory)"
		t.unload.Action = m.Unload
		t.unload.Disabled = !s.Loaded
	} else {
		t.unload.Label = "Load model"
		id := s.ID
		t.unload.Action = func() { go m.Use(id) }
		t.unload.Disabled = s.ID == ""
	}
}
