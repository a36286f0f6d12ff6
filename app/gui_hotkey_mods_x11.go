//go:build linux && x11hotkey

package main

import (
	"golang.design/x/hotkey"

	"perch/ui"
)

// X11: Alt is Mod1, Super is Mod4.
var hotkeyMods = map[ui.Modifier]hotkey.Modifier{
	ui.ModCtrl: hotkey.ModCtrl, ui.ModOption: hotkey.Mod1, ui.ModShift: hotkey.ModShift, ui.ModCmd: hotkey.Mod4,
}
