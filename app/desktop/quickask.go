package desktop

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"perch/app/platform"
)

// The ways into quick-ask: the tray item, the global shortcut (macOS, and
// X11 on Linux), and perch quick-ask, which reaches the running app through
// its instance socket, so that any desktop can bind a key to it.

// setHotkey makes spec the quick-ask shortcut. Menus and Settings show it
// only once the OS has taken it; told says, in a dialog too, why not
// (the user just chose it).
func (g *App) setHotkey(spec string, told bool) {
	done := func(err error) {
		fyne.Do(func() {
			if err != nil {
				g.ui.SetHotkey("", err)
				if told {
					dialog.ShowInformation("Quick-ask shortcut", err.Error(), g.ui.Main.Window)
				}
				return
			}
			g.ui.SetHotkey(spec, nil)
		})
	}
	if !platform.HotkeySupported {
		done(g.hotkey.Set(spec, nil, nil))
		return
	}
	if err := g.hotkey.Set(spec, g.hotkeyPressed, done); err != nil {
		done(err)
	}
}

// hotkeyPressed toggles the quick-ask popup (from the hotkey's goroutine).
func (g *App) hotkeyPressed() { fyne.Do(func() { g.ui.QuickAsk().Toggle() }) }

// instanceCommand does what a later launch asked (from the socket's goroutine).
func (g *App) instanceCommand(cmd string) {
	fyne.Do(func() {
		switch cmd {
		case platform.CmdQuickAsk:
			g.showQuickAsk()
		default:
			g.showMain()
		}
	})
}
