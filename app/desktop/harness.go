package desktop

import (
	"flag"

	"fyne.io/fyne/v2"

	"perch/app/chat"
	"perch/app/toolset"
	"perch/ui/window"
)

// Harness drives a started app for scripted runs (make screenshot). The
// shipped binary has none: a build tagged screenshots links package shots,
// which sets one.
type Harness interface {
	AddFlags(fs *flag.FlagSet) // its flags join perch gui's
	Wanted() bool              // whether the parsed flags ask for a scripted run
	Run(a *App)                // drives the app once its window is up, on its own goroutine
}

var harness Harness

// SetHarness installs the scripted-run driver (from an init).
func SetHarness(h Harness) { harness = h }

// HarnessFlags adds the harness's flags, if one is linked in, to fs.
func HarnessFlags(fs *flag.FlagSet) {
	if harness != nil {
		harness.AddFlags(fs)
	}
}

// What a harness reaches of the running app.

func (g *App) Fyne() fyne.App    { return g.app }
func (g *App) UI() *window.UI    { return g.ui }
func (g *App) TrayOK() bool      { return g.trayOK }
func (g *App) DataDir() string   { return g.dataDir }
func (g *App) SetExitCode(c int) { g.exitCode = c }

// Chat is the conversation service; Tools the user's MCP servers.
func (g *App) Chat() *chat.Service { return g.chat }
func (g *App) Tools() *toolset.Set { return g.tools }
