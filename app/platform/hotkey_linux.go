package platform

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"perch/ui"
)

// Hotkey is the quick-ask shortcut on Linux: a key grab on the X
// server's root window, over the X protocol in Go (no Xlib, so nothing
// opens a display at start-up, and a key another app holds is an error,
// not a crash). Wayland has no such grab; there the desktop's own
// shortcut settings run perch quick-ask.
type Hotkey struct {
	mu      sync.Mutex
	display string // "" is $DISPLAY
	conn    *xgb.Conn
}

const HotkeySupported = true

func init() { xgb.Logger = log.New(io.Discard, "", 0) } // errors come back as values

var errWayland = errors.New("Wayland lets no app take a global shortcut: in your desktop's keyboard settings, add a shortcut that runs perch quick-ask")

// Set validates spec and grabs it in the background; pressed runs on each
// press (from another goroutine); done learns whether the grab took (nil:
// the shortcut is active).
func (g *Hotkey) Set(spec string, pressed func(), done func(error)) error {
	h, err := ui.ParseHotkey(spec)
	if err != nil {
		return err
	}
	sym, ok := keysyms(h.Key)
	if !ok {
		return fmt.Errorf("key %s cannot be a global shortcut", h.Key)
	}
	go func() { done(g.grab(h, sym, pressed)) }()
	return nil
}

func (g *Hotkey) grab(h ui.Hotkey, sym xproto.Keysym, pressed func()) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.offLocked()
	display := g.display
	if display == "" {
		display = os.Getenv("DISPLAY")
		if display == "" {
			if os.Getenv("WAYLAND_DISPLAY") != "" {
				return errWayland
			}
			return errors.New("there is no X display to take a global shortcut from: bind a key to perch quick-ask in your desktop's settings")
		}
	}
	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		return fmt.Errorf("could not reach the X display %s: %v", display, err)
	}
	setup := xproto.Setup(conn)
	root := setup.DefaultScreen(conn).Root
	code, ok := keycodeOf(conn, setup, sym)
	if !ok {
		conn.Close()
		return fmt.Errorf("this keyboard has no %s key", h.Key)
	}
	mods := modMask(h)
	// Caps Lock and Num Lock must not stop the shortcut: grab it with them too.
	for _, extra := range []uint16{0, xproto.ModMaskLock, xproto.ModMask2, xproto.ModMaskLock | xproto.ModMask2} {
		if err := xproto.GrabKeyChecked(conn, true, root, mods|extra, code, xproto.GrabModeAsync, xproto.GrabModeAsync).Check(); err != nil {
			conn.Close()
			return fmt.Errorf("%s is taken by another app or the desktop: choose another in Settings, or bind a key to perch quick-ask", h.Label())
		}
	}
	g.conn = conn
	go func() {
		for {
			ev, err := conn.WaitForEvent()
			if ev == nil && err == nil {
				return // closed
			}
			if _, ok := ev.(xproto.KeyPressEvent); ok {
				pressed()
			}
		}
	}()
	return nil
}

// Off lets the shortcut go.
func (g *Hotkey) Off() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.offLocked()
}

func (g *Hotkey) offLocked() {
	if g.conn != nil {
		g.conn.Close() // the server drops the connection's grabs
		g.conn = nil
	}
}

func modMask(h ui.Hotkey) uint16 {
	var m uint16
	for _, mod := range h.Mods {
		m |= map[ui.Modifier]uint16{ui.ModCtrl: xproto.ModMaskControl, ui.ModShift: xproto.ModMaskShift,
			ui.ModOption: xproto.ModMask1, ui.ModCmd: xproto.ModMask4}[mod]
	}
	return m
}

// keysyms maps a hotkey's key to its X keysym (keysymdef.h).
func keysyms(key string) (xproto.Keysym, bool) {
	switch {
	case len(key) == 1 && key[0] >= 'A' && key[0] <= 'Z':
		return xproto.Keysym(key[0] - 'A' + 'a'), true
	case len(key) == 1 && key[0] >= '0' && key[0] <= '9':
		return xproto.Keysym(key[0]), true
	case len(key) >= 2 && key[0] == 'F':
		var n int
		if _, err := fmt.Sscanf(key[1:], "%d", &n); err == nil && n >= 1 && n <= 12 {
			return xproto.Keysym(0xffbe + n - 1), true
		}
	}
	s, ok := map[string]xproto.Keysym{"Space": 0x20, "Return": 0xff0d, "Tab": 0xff09, "Escape": 0xff1b}[key]
	return s, ok
}

// keycodeOf finds the key that types sym on this keyboard.
func keycodeOf(conn *xgb.Conn, setup *xproto.SetupInfo, sym xproto.Keysym) (xproto.Keycode, bool) {
	first, last := setup.MinKeycode, setup.MaxKeycode
	m, err := xproto.GetKeyboardMapping(conn, first, byte(last-first+1)).Reply()
	if err != nil || m.KeysymsPerKeycode == 0 {
		return 0, false
	}
	per := int(m.KeysymsPerKeycode)
	for i := 0; i*per < len(m.Keysyms); i++ {
		for _, s := range m.Keysyms[i*per : (i+1)*per] {
			if s == sym {
				return first + xproto.Keycode(i), true
			}
		}
	}
	return 0, false
}
