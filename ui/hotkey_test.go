package ui

import (
	"strings"
	"testing"
)

func TestParseHotkey(t *testing.T) {
	for in, want := range map[string]string{
		"Option+Space":     "Option+Space",
		"alt+space":        "Option+Space",
		"⌥Space":           "Option+Space",
		"⌘⇧a":              "Shift+Cmd+A",
		"ctrl-shift-k":     "Ctrl+Shift+K",
		" Cmd + Return ":   "Cmd+Return",
		"control+option+7": "Ctrl+Option+7",
		"Super+F12":        "Cmd+F12",
	} {
		h, err := ParseHotkey(in)
		if err != nil {
			t.Errorf("ParseHotkey(%q): %v", in, err)
			continue
		}
		if !macKeys { // the platform's names
			want = strings.NewReplacer("Option", "Alt", "Cmd", "Super").Replace(want)
		}
		if h.String() != want {
			t.Errorf("ParseHotkey(%q) = %s, want %s", in, h, want)
		}
	}
	h, _ := ParseHotkey(DefaultHotkey)
	if want := map[bool]string{true: "⌥Space", false: "Ctrl+Alt+Space"}[macKeys]; h.Label() != want {
		t.Errorf("the default shortcut reads %q in menus, want %q", h.Label(), want)
	}
	if h, _ := ParseHotkey("Option+Space"); h.Symbols() != "⌥Space" {
		t.Errorf("Symbols = %q", h.Symbols())
	}
	for in, wantErr := range map[string]string{
		"":                "empty",
		"Space":           "needs a modifier",
		"Shift+A":         "Shift alone",
		"Option+Option+A": "repeats",
		"Option+Foo":      "unknown key",
		"A+Space":         "not a modifier",
		"Ctrl+F13":        "unknown key",
		"Ctrl+F01":        "unknown key",
		"Ctrl+":           "unknown key",
	} {
		_, err := ParseHotkey(in)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseHotkey(%q) error = %v, want it to mention %q", in, err, wantErr)
		}
	}
}

// FuzzParseHotkey: any text typed into Settings parses or is refused with a
// message; what parses prints back to itself.
func FuzzParseHotkey(f *testing.F) {
	for _, s := range []string{"Option+Space", "⌘⇧a", "ctrl--", "⌥", "+++", "F1", "Ctrl+F9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHotkey(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(h.Mods) == 0 || h.Key == "" {
			t.Fatalf("ParseHotkey(%q) = %+v without error", s, h)
		}
		again, err := ParseHotkey(h.String())
		if err != nil || again.String() != h.String() {
			t.Fatalf("round trip %q -> %q -> %v, %v", s, h, again, err)
		}
	})
}
