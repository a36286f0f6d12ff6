//go:build screenshots

// Package shots is the scripted run behind make screenshot and the demo:
// it drives the real app as a person would (attach through the drop path,
// ask, wait, capture each window). It is linked only into builds tagged
// screenshots, never into the shipped binary.
package shots

import (
	"flag"
	"strings"
	"time"

	"fyne.io/fyne/v2"

	"perch/app/desktop"
	"perch/ui/window"
)

func init() { desktop.SetHarness(&flags{}) }

// flags are the scripted run's options, added to perch gui's.
type flags struct {
	attach      []string // files attached as a drop would
	ask         string   // message sent once the window is up
	screenshots string   // folder: capture the windows, then quit
	timeout     time.Duration
	teachDemo   bool // with screenshots: feedback, a Teach run, a chat with its adapter
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func (f *flags) AddFlags(fs *flag.FlagSet) {
	fs.Var((*listFlag)(&f.attach), "attach", "attach a file to the first message, as a drop would (repeatable)")
	fs.StringVar(&f.ask, "ask", "", "send this message once the window is up")
	fs.StringVar(&f.screenshots, "screenshots", "", "write PNG screenshots of the windows to this folder, then quit")
	fs.DurationVar(&f.timeout, "timeout", 3*time.Minute, "with -screenshots: give up (exit 1) after this long")
	fs.BoolVar(&f.teachDemo, "teach-demo", false, "with -screenshots: also give feedback on answers, train an adapter on the Teach page and chat with it")
}

func (f *flags) Wanted() bool { return f.screenshots != "" || f.ask != "" || len(f.attach) > 0 }

func (f *flags) Run(a *desktop.App) {
	g := &gui{App: a, app: a.Fyne(), ui: a.UI(), trayOK: a.TrayOK(), dataDir: a.DataDir()}
	g.script(f)
}

// gui is what the script reaches of the running app.
type gui struct {
	*desktop.App
	app     fyne.App
	ui      *window.UI
	trayOK  bool
	dataDir string
}
