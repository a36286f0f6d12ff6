package ui

import (
	"fyne.io/fyne/v2"
)

// Env is what every view shares: services, and how to reach the UI
// goroutine (do, fyne.Do in the app) and run work off it (run, go).
type Env struct {
	App            fyne.App
	Chat           Chat
	Model          Model
	Catalog        Catalog
	Recorder       Recorder
	Settings       SettingsStore
	ApplySettings  func(old, new Settings) error
	LoginSupported bool
	Icon           fyne.Resource
	Teacher        Teacher
	Adapters       Adapters
	Feedback       Feedback
	Tools          ToolSettings
	Budgets        []int
	HotkeyActive   string // the quick-ask shortcut that works ("" none)
	HotkeyErr      error  // why the chosen one does not
	Do             func(func())
	Run            func(func())
}

func (e *Env) Copy(text string) { e.App.Clipboard().SetContent(text) }
