//go:build darwin

package platform

import (
	"fmt"

	"golang.design/x/hotkey"

	"perch/ui"
)

// Hotkey is the quick-ask shortcut. Registration waits on the main
// thread's run loop (the library dispatches to it), so every operation runs
// on one worker goroutine, never on the UI thread, and only after the app
// has started.
type Hotkey struct {
	ops     chan func()
	current *hotkey.Hotkey
}

// HotkeySupported says whether this build has a global shortcut.
const HotkeySupported = true

// Set validates spec and registers it in the background; pressed runs on
// each press (from another goroutine); done learns whether the OS took it
// (nil: the shortcut is active).
func (g *Hotkey) Set(spec string, pressed func(), done func(error)) error {
	h, err := ui.ParseHotkey(spec)
	if err != nil {
		return err
	}
	mods, key, err := hotkeyCodes(h)
	if err != nil {
		return err
	}
	g.do(func() {
		g.off()
		hk := hotkey.New(mods, key)
		if err := hk.Register(); err != nil {
			done(fmt.Errorf("%s is taken by another app or the system: choose another in Settings", h.Label()))
			return
		}
		g.current = hk
		done(nil)
		go func() {
			for range hk.Keydown() {
				pressed()
			}
		}()
	})
	return nil
}

// Off unregisters the shortcut.
func (g *Hotkey) Off() { g.do(g.off) }

func (g *Hotkey) off() {
	if g.current != nil {
		g.current.Unregister()
		g.current = nil
	}
}

func (g *Hotkey) do(f func()) {
	if g.ops == nil {
		g.ops = make(chan func(), 8)
		go func() {
			for op := range g.ops {
				op()
			}
		}()
	}
	g.ops <- f
}

var hotkeyKeys = map[string]hotkey.Key{
	"Space": hotkey.KeySpace, "Return": hotkey.KeyReturn, "Tab": hotkey.KeyTab, "Escape": hotkey.KeyEscape,
	"0": hotkey.Key0, "1": hotkey.Key1, "2": hotkey.Key2, "3": hotkey.Key3, "4": hotkey.Key4,
	"5": hotkey.Key5, "6": hotkey.Key6, "7": hotkey.Key7, "8": hotkey.Key8, "9": hotkey.Key9,
	"A": hotkey.KeyA, "B": hotkey.KeyB, "C": hotkey.KeyC, "D": hotkey.KeyD, "E": hotkey.KeyE, "F": hotkey.KeyF,
	"G": hotkey.KeyG, "H": hotkey.KeyH, "I": hotkey.KeyI, "J": hotkey.KeyJ, "K": hotkey.KeyK, "L": hotkey.KeyL,
	"M": hotkey.KeyM, "N": hotkey.KeyN, "O": hotkey.KeyO, "P": hotkey.KeyP, "Q": hotkey.KeyQ, "R": hotkey.KeyR,
	"S": hotkey.KeyS, "T": hotkey.KeyT, "U": hotkey.KeyU, "V": hotkey.KeyV, "W": hotkey.KeyW, "X": hotkey.KeyX,
	"Y": hotkey.KeyY, "Z": hotkey.KeyZ,
	"F1": hotkey.KeyF1, "F2": hotkey.KeyF2, "F3": hotkey.KeyF3, "F4": hotkey.KeyF4, "F5": hotkey.KeyF5, "F6": hotkey.KeyF6,
	"F7": hotkey.KeyF7, "F8": hotkey.KeyF8, "F9": hotkey.KeyF9, "F10": hotkey.KeyF10, "F11": hotkey.KeyF11, "F12": hotkey.KeyF12,
}

func hotkeyCodes(h ui.Hotkey) ([]hotkey.Modifier, hotkey.Key, error) {
	key, ok := hotkeyKeys[h.Key]
	if !ok {
		return nil, 0, fmt.Errorf("key %s cannot be a global shortcut", h.Key)
	}
	var mods []hotkey.Modifier
	for _, m := range h.Mods {
		mods = append(mods, hotkeyMods[m])
	}
	return mods, key, nil
}
