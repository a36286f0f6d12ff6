package ui

import (
	"fmt"
	"runtime"
	"strings"
	"unicode/utf8"
)

// Modifier is a hotkey modifier.
type Modifier string

const (
	ModCtrl   Modifier = "Ctrl"
	ModOption Modifier = "Option" // Alt on Linux and Windows
	ModShift  Modifier = "Shift"
	ModCmd    Modifier = "Cmd" // Super on Linux, Win on Windows
)

// Hotkey is a parsed global shortcut such as Option+Space.
type Hotkey struct {
	Mods []Modifier // in the order Ctrl, Option, Shift, Cmd
	Key  string     // "Space", "A"–"Z", "0"–"9", "F1"–"F12", "Return", "Tab"
}

// DefaultHotkey opens the quick-ask popup: ⌥Space on macOS (ChatGPT's);
// elsewhere Alt+Space is the window menu, so Ctrl+Alt+Space.
var DefaultHotkey = func() string {
	if macKeys {
		return "Option+Space"
	}
	return "Ctrl+Alt+Space"
}()

// macKeys: macOS names the modifiers with symbols (⌥⇧⌘) and spells Cmd;
// elsewhere they read Ctrl, Alt, Shift, Super.
var macKeys = runtime.GOOS == "darwin"

var modNames = map[string]Modifier{
	"ctrl": ModCtrl, "control": ModCtrl, "⌃": ModCtrl, "^": ModCtrl,
	"option": ModOption, "opt": ModOption, "alt": ModOption, "⌥": ModOption,
	"shift": ModShift, "⇧": ModShift,
	"cmd": ModCmd, "command": ModCmd, "super": ModCmd, "win": ModCmd, "meta": ModCmd, "⌘": ModCmd,
}

var namedKeys = map[string]string{"space": "Space", "return": "Return", "enter": "Return", "tab": "Tab", "escape": "Escape", "esc": "Escape"}

// ParseHotkey reads "Option+Space", "ctrl+shift+k", "⌥Space" or "⌘⇧A". A
// hotkey needs at least one modifier and exactly one key.
func ParseHotkey(s string) (Hotkey, error) {
	var h Hotkey
	seen := map[Modifier]bool{}
	rest := strings.TrimSpace(s)
	if len(rest) > 64 {
		return h, fmt.Errorf("hotkey %q is too long", rest[:64])
	}
	var parts []string
	for _, p := range strings.FieldsFunc(rest, func(r rune) bool { return r == '+' || r == '-' || r == ' ' }) {
		// Split leading modifier symbols: "⌥⇧Space" → ⌥, ⇧, Space.
		for p != "" {
			r, n := utf8.DecodeRuneInString(p)
			if _, ok := modNames[string(r)]; ok && r >= utf8.RuneSelf {
				parts = append(parts, string(r))
				p = p[n:]
				continue
			}
			parts = append(parts, p)
			break
		}
	}
	if len(parts) == 0 {
		return h, fmt.Errorf("empty hotkey: type one like %s", DefaultHotkey)
	}
	for i, p := range parts {
		if m, ok := modNames[strings.ToLower(p)]; ok && i < len(parts)-1 {
			if seen[m] {
				return h, fmt.Errorf("hotkey %q repeats %s", s, m)
			}
			seen[m] = true
			continue
		}
		if i != len(parts)-1 {
			return h, fmt.Errorf("hotkey %q: %q is not a modifier (use Ctrl, Option, Shift or Cmd)", s, p)
		}
		key, err := parseKey(p)
		if err != nil {
			return h, fmt.Errorf("hotkey %q: %v", s, err)
		}
		h.Key = key
	}
	for _, m := range []Modifier{ModCtrl, ModOption, ModShift, ModCmd} {
		if seen[m] {
			h.Mods = append(h.Mods, m)
		}
	}
	if len(h.Mods) == 0 {
		return h, fmt.Errorf("hotkey %q needs a modifier such as Option or Ctrl", s)
	}
	if len(h.Mods) == 1 && h.Mods[0] == ModShift {
		return h, fmt.Errorf("hotkey %q: Shift alone would swallow typing; add Ctrl, Option or Cmd", s)
	}
	return h, nil
}

func parseKey(p string) (string, error) {
	if k, ok := namedKeys[strings.ToLower(p)]; ok {
		return k, nil
	}
	up := strings.ToUpper(p)
	if len(up) == 1 && (up[0] >= 'A' && up[0] <= 'Z' || up[0] >= '0' && up[0] <= '9') {
		return up, nil
	}
	if len(up) >= 2 && up[0] == 'F' {
		var n int
		if _, err := fmt.Sscanf(up[1:], "%d", &n); err == nil && n >= 1 && n <= 12 && fmt.Sprint(n) == up[1:] {
			return up, nil
		}
	}
	return "", fmt.Errorf("unknown key %q (use Space, a letter, a digit, F1–F12, Return or Tab)", p)
}

// String writes the hotkey the way it parses, with the platform's key
// names: "Option+Space" on macOS, "Ctrl+Alt+Space" elsewhere.
func (h Hotkey) String() string {
	parts := make([]string, 0, len(h.Mods)+1)
	for _, m := range h.Mods {
		name := string(m)
		if !macKeys {
			name = map[Modifier]string{ModOption: "Alt", ModCmd: "Super"}[m]
			if name == "" {
				name = string(m)
			}
		}
		parts = append(parts, name)
	}
	return strings.Join(append(parts, h.Key), "+")
}

// Label is how menus show the hotkey: "⌥Space" on macOS, "Ctrl+Alt+Space"
// elsewhere.
func (h Hotkey) Label() string {
	if macKeys {
		return h.Symbols()
	}
	return h.String()
}

// Symbols writes the hotkey as macOS menus show it: "⌥Space".
func (h Hotkey) Symbols() string {
	sym := map[Modifier]string{ModCtrl: "⌃", ModOption: "⌥", ModShift: "⇧", ModCmd: "⌘"}
	var b strings.Builder
	for _, m := range h.Mods {
		b.WriteString(sym[m])
	}
	b.WriteString(h.Key)
	return b.String()
}
