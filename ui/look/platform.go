package look

import "runtime"

// OnMac: the wording of menus and pages follows the platform ("this Mac",
// "the menubar" on macOS; "this computer", "the tray" elsewhere).
var OnMac = runtime.GOOS == "darwin"

// PlatformText picks the macOS wording or everyone else's.
func PlatformText(mac, other string) string {
	if OnMac {
		return mac
	}
	return other
}
