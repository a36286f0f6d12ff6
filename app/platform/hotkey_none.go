//go:build !darwin && !linux

package platform

import (
	"errors"

	"perch/ui"
)

// Elsewhere than macOS and Linux there is no global shortcut; the
// quick-ask opens from the tray or with perch quick-ask.
type Hotkey struct{}

const HotkeySupported = false

var errNoHotkey = errors.New("global shortcuts are not available here: bind a key to the command perch quick-ask")

func (Hotkey) Set(spec string, pressed func(), done func(error)) error {
	if _, err := ui.ParseHotkey(spec); err != nil {
		return err
	}
	return errNoHotkey
}

func (Hotkey) Off() {}
