//go:build !darwin && !(linux && x11hotkey)

package main

import (
	"errors"

	"perch/ui"
)

// On Linux the hotkey library opens the X display in its init and panics
// without one, which would break every headless verb; builds tagged
// x11hotkey include it. Elsewhere the quick-ask opens from the menubar.
type globalHotkey struct{}

const hotkeySupported = false

var errNoHotkey = errors.New("global shortcuts are available on macOS (on Linux build with -tags x11hotkey); open Quick Ask from the menubar")

func (globalHotkey) Set(spec string, pressed func(), failed func(error)) error {
	if _, err := ui.ParseHotkey(spec); err != nil {
		return err
	}
	return errNoHotkey
}

func (globalHotkey) Off() {}
