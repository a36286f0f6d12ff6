// Package window composes Perch's windows from the views: the main window
// (sidebar of conversations, the chat from ui/chat, the models, settings,
// tools and Teach pages, the model button and its adapter menu, the
// keyboard shortcuts), the quick-ask popup and the menubar (tray) menu.
// The app builds it with New from its services (Deps) and drives it
// through UI and MainWindow; the hooks in scripted*.go and teachscript.go
// let the screenshot run do what a person would.
package window
