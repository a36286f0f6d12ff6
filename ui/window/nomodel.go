package window

import (
	"perch/ui"

	"fyne.io/fyne/v2/widget"
)

// What the app says and offers before it has a model.

// resumeLabel is the button for a download that stopped: "Resume" only
// when something was downloaded to resume from; after a failure before the
// first byte (offline), "Try again".
func resumeLabel(d ui.DownloadState) string {
	switch {
	case d.Done > 0:
		return "Resume"
	case d.Err != "":
		return "Try again"
	}
	return "Download"
}

// newChat is the sidebar's New chat. Without a model the welcome page is
// what shows, and it says why no chat opened (the button seemed dead).
func (mw *MainWindow) newChat() {
	mw.ShowConversation("")
	if mw.page == "welcome" && mw.welcome != nil {
		mw.welcome.intro.SetText("A chat needs a model first: download the one below, or use a model folder you already have.")
		mw.welcome.intro.Importance = widget.WarningImportance
		mw.welcome.intro.Refresh()
	}
}
