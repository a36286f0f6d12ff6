package platform

import (
	"golang.design/x/hotkey"

	"perch/ui"
)

var hotkeyMods = map[ui.Modifier]hotkey.Modifier{
	ui.ModCtrl: hotkey.ModCtrl, ui.ModOption: hotkey.ModOption, ui.ModShift: hotkey.ModShift, ui.ModCmd: hotkey.ModCmd,
}
