package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// chatEntry is a multiline entry where Enter sends, Shift+Enter adds a
// line, Ctrl/⌘+Enter also sends, Esc calls onEscape, and a paste that
// names a file (a path or file:// URI) attaches it instead of typing it.
// The window's own shortcuts (new chat, search, settings) pass through it.
type chatEntry struct {
	widget.Entry
	onSend      func()
	onEscape    func()
	onPastePath func(text string) bool // true: handled as an attachment
	appShortcut func(*desktop.CustomShortcut) bool
	shift       bool
}

func newChatEntry() *chatEntry {
	e := &chatEntry{}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.ExtendBaseWidget(e)
	return e
}

// KeyDown tracks Shift so Enter can tell send from newline.
func (e *chatEntry) KeyDown(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = true
	}
	e.Entry.KeyDown(k)
}

// KeyUp tracks Shift.
func (e *chatEntry) KeyUp(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = false
	}
	e.Entry.KeyUp(k)
}

// TypedKey sends on Enter unless Shift is held.
func (e *chatEntry) TypedKey(k *fyne.KeyEvent) {
	switch k.Name {
	case fyne.KeyReturn, fyne.KeyEnter:
		if !e.shift {
			if e.onSend != nil {
				e.onSend()
			}
			return
		}
	case fyne.KeyEscape:
		if e.onEscape != nil {
			e.onEscape()
			return
		}
	}
	e.Entry.TypedKey(k)
}

// TypedShortcut sends on Ctrl/⌘+Enter and attaches pasted file names.
func (e *chatEntry) TypedShortcut(s fyne.Shortcut) {
	switch s := s.(type) {
	case *desktop.CustomShortcut:
		if (s.KeyName == fyne.KeyReturn || s.KeyName == fyne.KeyEnter) &&
			s.Modifier&(fyne.KeyModifierControl|fyne.KeyModifierSuper) != 0 {
			if e.onSend != nil {
				e.onSend()
			}
			return
		}
		if e.appShortcut != nil && e.appShortcut(s) {
			return
		}
	case *fyne.ShortcutPaste:
		if s.Clipboard != nil && e.onPastePath != nil && e.onPastePath(s.Clipboard.Content()) {
			return
		}
	}
	e.Entry.TypedShortcut(s)
}

// searchEntry is a one-line entry that lets the window's shortcuts through
// and calls onEscape on Esc.
type searchEntry struct {
	widget.Entry
	appShortcut func(*desktop.CustomShortcut) bool
	onEscape    func()
	onEnter     func() // opens the top hit
}

func newSearchEntry() *searchEntry {
	e := &searchEntry{}
	e.ExtendBaseWidget(e)
	return e
}

// TypedShortcut implements fyne.Shortcutable.
func (e *searchEntry) TypedShortcut(s fyne.Shortcut) {
	if cs, ok := s.(*desktop.CustomShortcut); ok && e.appShortcut != nil && e.appShortcut(cs) {
		return
	}
	e.Entry.TypedShortcut(s)
}

// TypedKey implements fyne.Focusable.
func (e *searchEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && e.onEscape != nil {
		e.onEscape()
		return
	}
	if (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && e.onEnter != nil {
		e.onEnter()
		return
	}
	e.Entry.TypedKey(k)
}
