package window

import (
	"fyne.io/fyne/v2/widget"
)

// What the app says and offers before it has a model.

// newChat is the sidebar's New chat. Without a model the welcome page is
// what shows, and it says why no chat opened (the button seemed dead).
func (mw *MainWindow) newChat() {
	mw.ShowConversation("")
	if mw.page == "welcome" && mw.welcome != nil {
		mw.welcome.Intro.SetText("A chat needs a model first: download the one below, or use a model folder you already have.")
		mw.welcome.Intro.Importance = widget.WarningImportance
		mw.welcome.Intro.Refresh()
	}
}
