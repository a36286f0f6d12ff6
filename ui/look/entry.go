package look

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// ChatEntry is a multiline entry where Enter sends, Shift+Enter adds a
// line, Ctrl/⌘+Enter also sends, Esc calls onEscape, and a paste that
// names a file (a path or file:// URI) attaches it instead of typing it.
// The window's own shortcuts (new chat, search, settings) pass through it.
type ChatEntry struct {
	widget.Entry
	OnSend      func()
	OnEscape    func()
	OnPastePath func(text string) bool // true: handled as an attachment
	AppShortcut func(*desktop.CustomShortcut) bool
	shift       bool
}

func NewChatEntry() *ChatEntry {
	e := &ChatEntry{}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.ExtendBaseWidget(e)
	return e
}

// KeyDown tracks Shift so Enter can tell send from newline.
func (e *ChatEntry) KeyDown(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = true
	}
	e.Entry.KeyDown(k)
}

// KeyUp tracks Shift.
func (e *ChatEntry) KeyUp(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = false
	}
	e.Entry.KeyUp(k)
}

// TypedKey sends on Enter unless Shift is held.
func (e *ChatEntry) TypedKey(k *fyne.KeyEvent) {
	switch k.Name {
	case fyne.KeyReturn, fyne.KeyEnter:
		if !e.shift {
			if e.OnSend != nil {
				e.OnSend()
			}
			return
		}
	case fyne.KeyEscape:
		if e.OnEscape != nil {
			e.OnEscape()
			return
		}
	}
	e.Entry.TypedKey(k)
}

// TypedShortcut sends on Ctrl/⌘+Enter and attaches pasted file names.
func (e *ChatEntry) TypedShortcut(s fyne.Shortcut) {
	switch s := s.(type) {
	case *desktop.CustomShortcut:
		if (s.KeyName == fyne.KeyReturn || s.KeyName == fyne.KeyEnter) &&
			s.Modifier&(fyne.KeyModifierControl|fyne.KeyModifierSuper) != 0 {
			if e.OnSend != nil {
				e.OnSend()
			}
			return
		}
		if e.AppShortcut != nil && e.AppShortcut(s) {
			return
		}
	case *fyne.ShortcutPaste:
		if s.Clipboard != nil && e.OnPastePath != nil && e.OnPastePath(s.Clipboard.Content()) {
			return
		}
	}
	e.Entry.TypedShortcut(s)
}

// SearchEntry is a one-line entry that lets the window's shortcuts through
// and calls onEscape on Esc.
type SearchEntry struct {
	widget.Entry
	AppShortcut func(*desktop.CustomShortcut) bool
	OnEscape    func()
	OnEnter     func() // opens the top hit
}

func NewSearchEntry() *SearchEntry {
	e := &SearchEntry{}
	e.ExtendBaseWidget(e)
	return e
}

// TypedShortcut implements fyne.Shortcutable.
func (e *SearchEntry) TypedShortcut(s fyne.Shortcut) {
	if cs, ok := s.(*desktop.CustomShortcut); ok && e.AppShortcut != nil && e.AppShortcut(cs) {
		return
	}
	e.Entry.TypedShortcut(s)
}

// TypedKey implements fyne.Focusable.
func (e *SearchEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && e.OnEscape != nil {
		e.OnEscape()
		return
	}
	if (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && e.OnEnter != nil {
		e.OnEnter()
		return
	}
	e.Entry.TypedKey(k)
}
