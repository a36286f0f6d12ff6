package ui

import "runtime"

// onMac: the wording of menus and pages follows the platform ("this Mac",
// "the menubar" on macOS; "this computer", "the tray" elsewhere).
var onMac = runtime.GOOS == "darwin"

// platformText picks the macOS wording or everyone else's.
func platformText(mac, other string) string {
	if onMac {
		return mac
	}
	return other
}
