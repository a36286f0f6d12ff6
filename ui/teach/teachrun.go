package teach

import (
	"fmt"
	"math"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/chart"
	"perch/ui/look"
)

// runPanel shows one run: what it is, where it stands, its controls and
// the live loss (and margin) chart.
type runPanel struct {
	env   *ui.Env
	win   fyne.Window
	Root  *fyne.Container
	title *widget.Label
	State *widget.Label
	note  *widget.Label
	bar   *widget.ProgressBar

	pause, resume, Stop, fromCkpt, try *widget.Button
	head                               *fyne.Container

	Loss, margin *chart.LineChart
	Explain      *widget.Label // what the charts mean
	marginLabel  string        // the method's own name for the margin chart, once a step said it
	Run          ui.TrainRun
	Shown        bool
	// live holds the points that arrived while the run's stored points
	// were being read (loading), so that reading them back does not wipe
	// the newer ones off the chart.
	live    []ui.TrainPoint
	loading bool

	mu      sync.Mutex
	pending []ui.TrainUpdate
	queued  bool

	parent     *fyne.Container        // the page, laid out again when the panel appears
	onFinished func()                 // a run ended: adapters and runs changed
	onStarted  func()                 // a run began
	OnTry      func(adapterID string) // "Try it in a new chat"
}

func newRunPanel(e *ui.Env, win fyne.Window) *runPanel {
	p := &runPanel{env: e, win: win}
	p.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.title.Truncation = fyne.TextTruncateEllipsis
	p.State = widget.NewLabel("")
	p.State.Wrapping = fyne.TextWrapWord
	p.note = widget.NewLabel("")
	p.note.Wrapping = fyne.TextWrapWord
	p.note.Hide()
	p.bar = widget.NewProgressBar()
	p.bar.TextFormatter = func() string { return fmt.Sprintf("%.0f%%", p.bar.Value*100) }
	p.pause = widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), func() { p.control(e.Teacher.Pause) })
	p.resume = widget.NewButtonWithIcon("Resume", theme.MediaPlayIcon(), func() { p.control(e.Teacher.Resume) })
	p.resume.Importance = widget.HighImportance
	p.Stop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), p.confirmStop)
	p.fromCkpt = widget.NewButtonWithIcon("Resume from checkpoint", theme.MediaReplayIcon(), p.resumeFromCheckpoint)
	p.fromCkpt.Importance = widget.HighImportance
	p.try = widget.NewButtonWithIcon("Try it in a new chat", look.SparkIcon, func() {
		if p.OnTry != nil && p.Run.AdapterID != "" {
			p.OnTry(p.Run.AdapterID)
		}
	})
	p.try.Importance = widget.HighImportance
	p.Loss = chart.NewLineChart("Loss",
		&chart.ChartSeries{Name: "Training", Color: theme.ColorNamePrimary, Smooth: 0.8},
		&chart.ChartSeries{Name: "Validation", Color: theme.ColorNameWarning, Dots: true})
	p.margin = chart.NewLineChart("Reward margin", &chart.ChartSeries{Name: "Chosen − rejected", Color: theme.ColorNameSuccess, Smooth: 0.8})
	buttons := container.NewHBox(p.pause, p.resume, p.Stop, p.fromCkpt, p.try)
	// The buttons under the lines, not beside them: the title keeps the
	// card's width ("Gemma-4 (tex…" was cut) and a narrow window stays so.
	p.head = container.NewVBox(p.title, p.State, buttons)
	charts := container.NewGridWithRows(1, p.Loss, p.margin)
	p.Explain = widget.NewLabel("")
	p.Explain.Wrapping = fyne.TextWrapWord
	p.Explain.Importance = widget.LowImportance
	p.Root = container.NewVBox(card(container.NewVBox(p.head, p.bar, p.note, charts, p.Explain)))
	p.Root.Hide()
	return p
}

// active reports whether the shown run is still going.
func (p *runPanel) active() bool { return p.Shown && p.Run.State.Active() }

// restore shows the newest run when the page opens and none is shown.
func (p *runPanel) restore() {
	if p.Shown {
		return
	}
	p.env.Run(func() {
		runs, err := p.env.Teacher.Runs()
		if err != nil || len(runs) == 0 {
			return
		}
		p.env.Do(func() {
			if !p.Shown {
				p.Follow(runs[0])
			}
		})
	})
}

// Follow shows run r with the points recorded so far.
func (p *runPanel) Follow(r ui.TrainRun) {
	p.Shown = true
	started := !p.Run.State.Active() && r.State.Active()
	p.Run = r
	if started && p.onStarted != nil {
		p.onStarted()
	}
	p.Loss.Reset()
	p.margin.Reset()
	p.live, p.loading = nil, true
	p.render()
	id := r.ID
	p.env.Run(func() {
		pts, err := p.env.Teacher.Points(id)
		p.env.Do(func() {
			if p.Run.ID != id {
				return
			}
			live := p.live
			p.live, p.loading = nil, false
			if err != nil {
				p.showNote("Could not read this run's metrics: "+err.Error(), widget.DangerImportance)
				return
			}
			p.Loss.Reset()
			p.margin.Reset()
			p.addPoints(append(pts, after(pts, live)...))
		})
	})
}

// after is the points of live past the last step of stored.
func after(stored, live []ui.TrainPoint) []ui.TrainPoint {
	last := -1
	for _, pt := range stored {
		last = max(last, pt.Step)
	}
	var out []ui.TrainPoint
	for _, pt := range live {
		if pt.Step > last {
			out = append(out, pt)
		}
	}
	return out
}

// push takes an update from any goroutine; updates are applied together,
// at most one batch waiting on the UI goroutine at a time.
func (p *runPanel) push(u ui.TrainUpdate) {
	p.mu.Lock()
	p.pending = append(p.pending, u)
	if p.queued {
		p.mu.Unlock()
		return
	}
	p.queued = true
	p.mu.Unlock()
	p.env.Do(p.flush)
}

func (p *runPanel) flush() {
	p.mu.Lock()
	batch := p.pending
	p.pending, p.queued = nil, false
	p.mu.Unlock()
	var pts []ui.TrainPoint
	finished := false
	for _, u := range batch {
		if u.Run.ID != p.Run.ID {
			if !u.Run.State.Active() || (p.Shown && p.Run.State.Active()) {
				continue // another run's news; the shown one stays
			}
			p.Follow(u.Run) // a new run started (from the form or elsewhere)
			continue
		}
		finished = finished || (p.Run.State.Active() && !u.Run.State.Active())
		p.Run = u.Run
		pts = append(pts, u.Points...)
	}
	p.Shown = true
	if p.loading {
		p.live = append(p.live, pts...)
	}
	if len(pts) > 0 {
		p.addPoints(pts)
	} else {
		p.render()
	}
	if finished && p.onFinished != nil {
		p.onFinished()
	}
}

func (p *runPanel) addPoints(pts []ui.TrainPoint) {
	for _, pt := range pts {
		x := float64(pt.Step)
		p.Loss.Add(0, x, pt.Loss)
		p.Loss.Add(1, x, pt.ValLoss)
		p.margin.Add(0, x, pt.Margin)
		if pt.MarginLabel != "" {
			p.marginLabel = pt.MarginLabel
		}
	}
	p.render()
}

// render shows the run's state, controls and charts.
func (p *runPanel) render() {
	r := p.Run
	if !p.Root.Visible() {
		p.Root.Show()
		if p.parent != nil {
			p.parent.Refresh() // a VBox sizes only the children visible when it laid out
		}
	}
	p.title.SetText(fmt.Sprintf("%s · %s · %s", r.Plan.Name, presetFor(r.Plan.Method).Short, r.BaseName))
	if r.Steps > 0 {
		p.bar.SetValue(math.Min(float64(r.Step)/float64(r.Steps), 1))
	}
	p.State.SetText(runStateLine(r))
	switch {
	case r.State == ui.RunFailed:
		p.showNote(r.Err, widget.DangerImportance)
	case r.State == ui.RunInterrupted && r.LastCheckpoint > 0:
		p.showNote(fmt.Sprintf("Perch stopped while this run was training. The checkpoint from step %d is complete: resume from it to go on.", r.LastCheckpoint), widget.WarningImportance)
	case r.State == ui.RunInterrupted:
		p.showNote("Perch stopped before this run saved its first checkpoint. Start it again from the form below.", widget.WarningImportance)
	case r.Yielding && r.State == ui.RunTraining:
		p.showNote("Paused while Perch answers your chat; training goes on right after.", widget.LowImportance)
	default:
		p.showNote("", widget.LowImportance)
	}
	show := func(b *widget.Button, on bool) {
		if on {
			b.Show()
		} else {
			b.Hide()
		}
	}
	show(p.pause, r.State == ui.RunTraining || r.State == ui.RunPreparing)
	show(p.resume, r.State == ui.RunPaused)
	show(p.Stop, r.State.Active())
	show(p.fromCkpt, (r.State == ui.RunInterrupted || r.State == ui.RunStopped || r.State == ui.RunFailed) && r.LastCheckpoint > 0 && r.Step < r.Steps)
	show(p.try, r.State == ui.RunDone && r.AdapterID != "" && p.OnTry != nil)
	p.head.Refresh() // lay the buttons out again: which are shown changed
	p.Loss.XMax, p.margin.XMax = float64(r.Steps), float64(r.Steps)
	switch {
	case p.marginLabel != "":
		p.margin.Title = capitalize(p.marginLabel)
	case r.Plan.Method == ui.MethodORPO:
		p.margin.Title = "Log-odds margin"
	default:
		p.margin.Title = "Reward margin"
	}
	switch r.Plan.Method {
	case ui.MethodSFT:
		p.margin.Hide()
		p.Explain.SetText("Loss falls as the adapter learns to answer like your examples; the validation loss, on rows held back, says whether it learned more than the rows by heart.")
	case ui.MethodKTO:
		p.margin.Show()
		p.Explain.SetText("Loss falls as the adapter learns. The margin rises as answers you liked grow more likely than those you disliked, measured against where the model started.")
	default:
		p.margin.Show()
		p.Explain.SetText("Loss falls as the adapter learns. The margin (chosen − rejected) rises as it comes to prefer the better answer of each pair over the worse one; above zero, it prefers the better.")
	}
	p.Loss.Refresh()
	p.margin.Refresh()
}

func (p *runPanel) showNote(msg string, imp widget.Importance) {
	if msg == "" {
		p.note.Hide()
		return
	}
	p.note.Importance = imp
	p.note.SetText(msg)
	p.note.Show()
}

// runStateLine is "Step 120 of 200 · 850 tokens/s · about 4 min left".
// lossText is a loss for people: four significant digits, and "below
// 0.0001" for the vanishing losses a small data set trains down to.
func lossText(v float64) string {
	if v >= 0 && v < 1e-4 {
		return "below 0.0001"
	}
	return fmt.Sprintf("%.4g", v)
}

func runStateLine(r ui.TrainRun) string {
	steps := fmt.Sprintf("step %d of %d", r.Step, r.Steps)
	best := ""
	if !math.IsNaN(r.BestVal) && r.BestStep > 0 {
		best = fmt.Sprintf(" · best validation loss %s at step %d", lossText(r.BestVal), r.BestStep)
	}
	switch r.State {
	case ui.RunPreparing:
		return "Preparing: building the data and loading the model…"
	case ui.RunTraining:
		s := "Training · " + steps
		if r.TokensPerSec > 0 {
			s += fmt.Sprintf(" · %.0f tokens/s", r.TokensPerSec)
		}
		if r.ETA > 0 {
			s += " · " + look.ETA(r.ETA)
		}
		return s
	case ui.RunPaused:
		return "Paused at " + steps
	case ui.RunDone:
		took := ""
		if !r.Started.IsZero() && r.Ended.After(r.Started) {
			took = " in " + tookText(r.Ended.Sub(r.Started))
		}
		return fmt.Sprintf("Done%s · %d steps · saved as the adapter %s%s", took, r.Steps, r.Plan.Name, best)
	case ui.RunStopped:
		return "Stopped at " + steps + best
	case ui.RunInterrupted:
		return "Interrupted at " + steps
	case ui.RunFailed:
		return "Failed at " + steps
	}
	return steps
}

// tookText is how long a run took: "48 s", "3 min 5 s", "1 h 12 min".
func tookText(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

func (p *runPanel) control(f func(string) error) {
	id := p.Run.ID
	p.env.Run(func() {
		if err := f(id); err != nil {
			p.env.Do(func() { p.showNote(err.Error(), widget.DangerImportance) })
		}
	})
}

func (p *runPanel) confirmStop() {
	d := dialog.NewConfirm("Stop training?", "The adapter as it is now is saved, and you can resume from its last checkpoint later.",
		func(ok bool) {
			if ok {
				p.control(p.env.Teacher.Stop)
			}
		}, p.win)
	d.SetConfirmText("Stop training")
	d.SetDismissText("Keep training")
	d.Show()
}

func (p *runPanel) resumeFromCheckpoint() {
	id := p.Run.ID
	p.env.Run(func() {
		r, err := p.env.Teacher.ResumeFromCheckpoint(id)
		p.env.Do(func() {
			if err != nil {
				p.showNote(err.Error(), widget.DangerImportance)
				return
			}
			p.Follow(r)
		})
	})
}

// card is a rounded panel around o.
func card(o fyne.CanvasObject) fyne.CanvasObject {
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCard))
	bg.CornerRadius = 12
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	return container.NewStack(bg, container.NewPadded(container.NewPadded(o)))
}

// when is a short date ("today 14:05", "29 Nov").
func when(t time.Time) string {
	now := time.Now()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return "today " + t.Format("15:04")
	}
	return t.Format("2 Jan 2006")
}
