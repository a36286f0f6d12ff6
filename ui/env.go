package ui

import "fyne.io/fyne/v2"

// Env is what every view is given: the Fyne app, the services (nil ones
// turn their page or buttons off), and how to reach the UI goroutine (Do:
// fyne.Do in the app) and run work off it (Run: a goroutine). The window
// builds it once; views read it and never replace a service.
type Env struct {
	App            fyne.App
	Chat           Chat
	Model          Model
	Catalog        Catalog
	Recorder       Recorder // nil: no microphone
	Settings       SettingsStore
	ApplySettings  func(old, new Settings) error // makes saved settings take effect
	LoginSupported bool
	Icon           fyne.Resource // the app icon, for the welcome page
	Teacher        Teacher
	Adapters       Adapters
	Feedback       Feedback
	Tools          ToolSettings
	Budgets        []int  // the image budgets the engine takes (nil: not checked)
	HotkeyActive   string // the quick-ask shortcut that works ("" none), set by the window
	HotkeyErr      error  // why the chosen one does not
	Do             func(func())
	Run            func(func())
}

// Copy puts text on the clipboard.
func (e *Env) Copy(text string) { e.App.Clipboard().SetContent(text) }
