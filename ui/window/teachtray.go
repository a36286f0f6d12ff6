package window

import "fyne.io/fyne/v2"

// SetTraining shows the run going on at the top of the menubar menu
// ("Training my-style · 45%", opening the Teach page) with icon as the
// menubar icon; label "" takes both away.
func (u *UI) SetTraining(label string, icon fyne.Resource, open func()) {
	t := u.tray
	if t == nil {
		return
	}
	switch {
	case label == "" && t.train != nil:
		t.menu.Items = t.menu.Items[2:]
		t.train = nil
		t.app.SetSystemTrayIcon(t.icon)
	case label != "" && t.train == nil:
		t.train = fyne.NewMenuItem(label, open)
		t.menu.Items = append([]*fyne.MenuItem{t.train, fyne.NewMenuItemSeparator()}, t.menu.Items...)
		if icon != nil {
			t.app.SetSystemTrayIcon(icon)
		}
	case label != "":
		t.train.Label = label
	}
	t.menu.Refresh()
}

// TrainingLabel is the menubar's training line ("" when none), for tests
// and scripted runs.
func (u *UI) TrainingLabel() string {
	if u.tray == nil || u.tray.train == nil {
		return ""
	}
	return u.tray.train.Label
}
