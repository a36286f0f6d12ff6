package window

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// The main window's keyboard: Ctrl+N (⌘N on macOS) starts a new chat,
// Ctrl+K searches the chats, Ctrl+, opens Settings, Esc stops an answer (or
// leaves a page); the composer has the focus whenever the chat shows.

// windowKeys are the shortcuts, in menus' wording.
var windowKeys = []struct {
	key  fyne.KeyName
	what string
}{{fyne.KeyN, "New chat"}, {fyne.KeyK, "Search chats"}, {fyne.KeyComma, "Settings"}}

func (mw *MainWindow) installKeys() {
	c := mw.Window.Canvas()
	for _, k := range windowKeys {
		c.AddShortcut(&desktop.CustomShortcut{KeyName: k.key, Modifier: fyne.KeyModifierShortcutDefault},
			func(s fyne.Shortcut) { mw.shortcut(s.(*desktop.CustomShortcut)) })
	}
	c.SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			mw.escape()
		}
	})
	// Entries that hold the focus pass these shortcuts on.
	mw.chat.Comp.Entry.AppShortcut = mw.shortcut
	mw.chat.Comp.Entry.OnEscape = mw.escape
	mw.side.search.AppShortcut = mw.shortcut
	mw.side.search.OnEscape = func() {
		mw.side.search.SetText("")
		mw.focusComposer()
	}
}

// shortcut runs a window shortcut and reports whether s was one.
func (mw *MainWindow) shortcut(s *desktop.CustomShortcut) bool {
	if s.Modifier != fyne.KeyModifierShortcutDefault {
		return false
	}
	switch s.KeyName {
	case fyne.KeyN:
		mw.ShowConversation("")
	case fyne.KeyK:
		mw.showChat()
		mw.Window.Canvas().Focus(mw.side.search)
	case fyne.KeyComma:
		mw.ShowSettings()
	default:
		return false
	}
	return true
}

// escape stops the answer being written; elsewhere it goes back to the chat.
func (mw *MainWindow) escape() {
	switch {
	case mw.page == "chat" && mw.chat.Live != nil:
		mw.chat.Stop()
	case mw.page != "chat" && mw.page != "welcome":
		mw.showChat()
	}
}

// focusComposer puts the cursor in the message box when the chat shows.
func (mw *MainWindow) focusComposer() {
	if mw.page != "chat" || mw.chat.Comp.Entry.Disabled() {
		return
	}
	mw.Window.Canvas().Focus(mw.chat.Comp.Entry)
}

// ShortcutLabel is how menus write the shortcut for key: "Ctrl+N", or
// "⌘N" on macOS.
func ShortcutLabel(key fyne.KeyName) string {
	if fyne.KeyModifierShortcutDefault == fyne.KeyModifierSuper {
		return "⌘" + string(key)
	}
	return "Ctrl+" + string(key)
}
