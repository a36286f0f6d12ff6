package compose

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/look"
)

// MaxClip is the longest voice clip (Gemma-4 listens to at most 30 s).
const MaxClip = 30 * time.Second

// holdToTalk is how long a press must last to count as hold-to-talk.
const holdToTalk = 400 * time.Millisecond

// micButton records on click (click again to stop) and, when held, records
// until it is released.
type micButton struct {
	widget.Button
	c          *Composer
	pressedAt  time.Time
	swallowTap bool // the tap that follows this press was already handled
}

func newMicButton(c *Composer) *micButton {
	m := &micButton{c: c}
	m.Icon = look.MicIcon
	m.Importance = widget.LowImportance
	m.OnTapped = m.tap
	m.ExtendBaseWidget(m)
	return m
}

// MouseDown starts a recording at once, so hold-to-talk loses nothing.
func (m *micButton) MouseDown(*desktop.MouseEvent) {
	m.swallowTap = false
	if m.Disabled() || m.c.rec.active() {
		return
	}
	m.pressedAt = time.Now()
	m.swallowTap = m.c.rec.start()
}

// MouseUp ends a hold-to-talk recording.
func (m *micButton) MouseUp(*desktop.MouseEvent) {
	if m.swallowTap && time.Since(m.pressedAt) >= holdToTalk && m.c.rec.active() {
		m.c.rec.finish(true)
	}
}

// tap toggles recording; the tap ending a press that MouseDown/Up already
// handled is ignored.
func (m *micButton) tap() {
	if m.swallowTap {
		m.swallowTap = false
		return
	}
	if m.c.rec.active() {
		m.c.rec.finish(true)
	} else {
		m.c.rec.start()
	}
}

// recorderPanel replaces the entry while recording: a red dot, elapsed time,
// a live level meter, Cancel and Done.
type recorderPanel struct {
	c       *Composer
	rec     ui.Recording
	started time.Time
	peak    float64
	ending  bool

	elapsed *widget.Label
	meter   *levelMeter
	root    fyne.CanvasObject
}

func newRecorderPanel(c *Composer) *recorderPanel {
	p := &recorderPanel{c: c}
	dot := canvas.NewCircle(look.ThemeColor(theme.ColorNameError))
	p.elapsed = widget.NewLabel("0:00 / 0:30")
	p.elapsed.TextStyle.Monospace = true
	p.meter = newLevelMeter()
	cancel := widget.NewButtonWithIcon("", theme.CancelIcon(), func() { p.finish(false) })
	cancel.Importance = widget.LowImportance
	done := widget.NewButtonWithIcon("Done", theme.ConfirmIcon(), func() { p.finish(true) })
	p.root = container.NewBorder(nil, nil,
		container.NewHBox(container.NewGridWrap(fyne.NewSquareSize(12), dot), widget.NewLabel("Recording"), p.elapsed),
		container.NewHBox(cancel, done),
		container.NewPadded(p.meter))
	return p
}

func (p *recorderPanel) active() bool { return p.rec != nil }

// start begins a clip; it reports whether recording started.
func (p *recorderPanel) start() bool {
	if p.rec != nil || p.c.env.Recorder == nil {
		if p.c.env.Recorder == nil {
			p.c.ShowNotice("Voice clips are not available in this build.")
		}
		return false
	}
	rec, err := p.c.env.Recorder.Start(MaxClip)
	if err != nil {
		p.c.ShowNotice(err.Error())
		return false
	}
	p.rec, p.started, p.peak, p.ending = rec, time.Now(), 0, false
	p.meter.set(0)
	p.tick()
	p.c.input.Objects = []fyne.CanvasObject{p.root}
	p.c.input.Refresh()
	p.c.clearNotice()
	levels := rec.Levels()
	p.c.env.Run(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case l, ok := <-levels:
				if !ok { // stopped, cancelled or hit the cap
					p.c.env.Do(func() {
						if p.rec == rec {
							p.finish(true)
						}
					})
					return
				}
				p.c.env.Do(func() {
					if p.rec == rec {
						p.peak = max(p.peak, l)
						p.meter.set(l)
						p.tick()
					}
				})
			case <-t.C:
				p.c.env.Do(func() {
					if p.rec == rec {
						p.tick()
					}
				})
			}
		}
	})
	return true
}

func (p *recorderPanel) tick() {
	el := min(time.Since(p.started), MaxClip)
	p.elapsed.SetText(fmt.Sprintf("%s / %s", look.Clock(el), look.Clock(MaxClip)))
}

// finish ends the clip, attaching it when keep is set.
func (p *recorderPanel) finish(keep bool) {
	rec := p.rec
	if rec == nil || p.ending {
		return
	}
	p.ending = true
	p.rec = nil
	p.c.input.Objects = []fyne.CanvasObject{p.c.Entry}
	p.c.input.Refresh()
	if !keep {
		rec.Cancel()
		return
	}
	wav, length, err := rec.Stop()
	switch {
	case err != nil:
		p.c.ShowNotice(err.Error())
	case len(wav) == 0 || length < 300*time.Millisecond:
		p.c.ShowNotice("That clip was too short. Click the mic to record, or hold it while you speak.")
	case p.peak == 0:
		p.c.ShowNotice("The microphone sent only silence. " + look.PlatformText("Open System Settings → Privacy & Security → Microphone and turn Perch on, then try again.",
			"Check that the right input is chosen and not muted in your sound settings, then try again."))
	default:
		p.c.addData(fmt.Sprintf("Voice clip %s.wav", look.Clock(length)), wav)
	}
}

// levelMeter is a horizontal bar showing the microphone level.
type levelMeter struct {
	widget.BaseWidget
	track, fill *canvas.Rectangle
	box         *fyne.Container
	level       float64
}

// CreateRenderer implements fyne.Widget.
func (m *levelMeter) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(m.box) }

func newLevelMeter() *levelMeter {
	m := &levelMeter{track: canvas.NewRectangle(look.ThemeColor(theme.ColorNameSeparator)),
		fill: canvas.NewRectangle(look.ThemeColor(look.ColorMeter))}
	m.track.CornerRadius, m.fill.CornerRadius = 3, 3
	m.box = container.New(meterLayout{m}, m.track, m.fill)
	m.ExtendBaseWidget(m)
	return m
}

func (m *levelMeter) set(l float64) {
	m.level = min(max(l, 0), 1)
	meterLayout{m}.Layout(nil, m.box.Size())
	m.fill.Refresh()
}

// meterLayout draws a 6 px bar centred vertically.
type meterLayout struct{ m *levelMeter }

// Layout implements fyne.Layout.
func (l meterLayout) Layout(_ []fyne.CanvasObject, size fyne.Size) {
	m := l.m
	y := (size.Height - 6) / 2
	m.track.Move(fyne.NewPos(0, y))
	m.track.Resize(fyne.NewSize(size.Width, 6))
	m.fill.Move(fyne.NewPos(0, y))
	m.fill.Resize(fyne.NewSize(size.Width*float32(m.level), 6))
}

// MinSize implements fyne.Layout.
func (meterLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(80, 12) }
