package look

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
)

func TestEnterShiftEnterCtrlEnter(t *testing.T) {
	e := NewChatEntry()
	w := test.NewTempWindow(t, e)
	w.Canvas().Focus(e)
	sent := 0
	e.OnSend = func() { sent++ }
	test.Type(e, "line one")
	e.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	e.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(e, "line two")
	if e.Text != "line one\nline two" || sent != 0 {
		t.Fatalf("Shift+Enter: text %q, sent %d", e.Text, sent)
	}
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEnter})
	e.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierShortcutDefault})
	if sent != 3 || e.Text != "line one\nline two" {
		t.Fatalf("Enter/keypad Enter/⌘Enter: sent %d, text %q", sent, e.Text)
	}
}
