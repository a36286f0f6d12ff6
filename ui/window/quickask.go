package window

import (
	"perch/ui"
	"perch/ui/look"

	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// QuickAsk is the small always-on-top popup the menubar and the global
// hotkey open: one entry that takes text, a dropped file or a voice clip,
// the answer streaming below it, and "Continue in window".
type QuickAsk struct {
	Window fyne.Window
	env    *env
	comp   *composer
	answer *fyne.Container
	scroll *container.Scroll
	footer *fyne.Container
	model  *widget.Label
	convID string
	live   *messageView
	cancel context.CancelFunc
	onCont func(convID string) *chatView
	last   *messageView
	mirror func(ui.Answer) // the main window, after "Continue in window"
	shown  bool
}

const quickWidth = 640

func newQuickAsk(e *env, onContinue func(convID string) *chatView) *QuickAsk {
	var w fyne.Window
	if d, ok := e.app.Driver().(desktop.Driver); ok {
		w = d.CreateSplashWindow() // no title bar, like Spotlight
	} else {
		w = e.app.NewWindow("Quick Ask")
	}
	w.SetTitle("Perch Quick Ask")
	q := &QuickAsk{Window: w, env: e, onCont: onContinue}
	q.comp = newComposer(e, w, "Ask Gemma anything…")
	q.comp.entry.SetMinRowsVisible(1)
	q.comp.entry.OnEscape = q.escape
	q.comp.onSend = q.send
	q.comp.onStop = q.stop
	q.answer = container.NewVBox()
	q.scroll = container.NewVScroll(container.New(layout.NewCustomPaddedLayout(4, 4, 8, 16), q.answer))
	q.scroll.SetMinSize(fyne.NewSize(quickWidth, 300))
	q.model = widget.NewLabel("")
	q.model.Importance = widget.LowImportance
	cont := widget.NewButtonWithIcon("Continue in window", theme.ViewFullScreenIcon(), q.continueInWindow)
	cont.Importance = widget.LowImportance
	closeBtn := widget.NewButtonWithIcon("", theme.CancelIcon(), q.Hide)
	closeBtn.Importance = widget.LowImportance
	q.footer = container.NewHBox(q.model, layout.NewSpacer(), look.Caption("esc to close"), cont, closeBtn)
	q.scroll.Hide()
	// A frameless popup needs its own edge to stand apart from the windows below.
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCard))
	bg.StrokeColor = look.ThemeColor(theme.ColorNameFocus)
	bg.StrokeWidth = 1.5
	w.SetContent(container.NewStack(bg, container.NewPadded(
		container.NewBorder(q.comp.root, q.footer, nil, nil, q.scroll))))
	w.Canvas().SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			q.escape()
		}
	})
	w.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) {
		var paths []string
		for _, u := range uris {
			if u.Scheme() == "file" {
				paths = append(paths, u.Path())
			}
		}
		q.comp.addPaths(paths)
	})
	if dw, ok := w.(desktop.Window); ok {
		dw.RequestAlwaysOnTop()
	}
	e.model.Watch(func(s ui.ModelState) { e.do(func() { q.modelChanged(s) }) })
	q.modelChanged(e.model.State())
	w.Resize(fyne.NewSize(quickWidth, 10))
	return q
}

// Show opens the popup centred on the screen, ready to type.
func (q *QuickAsk) Show() {
	q.shown = true
	q.modelChanged(q.env.model.State()) // the adapter choice may have changed
	if s := q.env.model.State(); s.ID != "" && !s.Loaded && !s.Loading {
		q.env.model.Preload()
	}
	q.Window.CenterOnScreen()
	q.Window.Show()
	q.Window.RequestFocus()
	q.Window.Canvas().Focus(q.comp.entry)
}

// Hide closes the popup; an answer still streaming goes on and is saved.
func (q *QuickAsk) Hide() { q.shown = false; q.Window.Hide() }

// Visible reports whether the popup is open.
func (q *QuickAsk) Visible() bool { return q.shown }

// Toggle opens the popup, or closes it when open (the hotkey does this).
func (q *QuickAsk) Toggle() {
	if q.shown {
		q.Hide()
	} else {
		q.Show()
	}
}

// Attach adds files as if dropped on the popup.
func (q *QuickAsk) Attach(paths ...string) { q.comp.addPaths(paths) }

// SetDraft types text into the entry.
func (q *QuickAsk) SetDraft(text string) { q.comp.entry.SetText(text) }

// Submit sends the draft.
func (q *QuickAsk) Submit() { q.comp.submit() }

// Busy reports whether an answer is streaming.
func (q *QuickAsk) Busy() bool { return q.live != nil }

// Answer is the last answer shown.
func (q *QuickAsk) Answer() (ui.Message, bool) {
	if q.last == nil {
		return ui.Message{}, false
	}
	return q.last.msg, true
}

// AnswerText is the answer shown so far.
func (q *QuickAsk) AnswerText() string {
	if q.last == nil {
		return ""
	}
	return q.last.msg.Text
}

func (q *QuickAsk) modelChanged(s ui.ModelState) {
	switch {
	case s.ID == "":
		q.model.SetText("No model yet: open Perch to get one")
		q.comp.setLocked(true, "Get a model in Perch first")
	default:
		q.model.SetText(s.Name + adapterSuffix(q.env))
		q.comp.setLocked(false, "Ask Gemma anything…")
	}
}

func (q *QuickAsk) send(text string, atts []ui.Attachment) error {
	if q.live != nil {
		return errBusy
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := q.env.chat.Send(ctx, q.convID, text, atts)
	if err != nil {
		cancel()
		return err
	}
	q.convID = r.ConversationID
	q.answer.Objects = nil
	q.mirror = nil
	question := widget.NewLabelWithStyle(look.Clip(text, 300), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	question.Wrapping = fyne.TextWrapWord
	q.answer.Add(question)
	a := r.Assistant
	a.State = ui.Streaming
	// Quick answers have no regenerate ("Continue in window" has it), but
	// take thumbs like any answer.
	convID := q.convID
	rate, _ := feedbackActions(q.env, func() string { return convID }, q.comp.showNotice,
		func(id string) *messageView {
			if q.last != nil && q.last.msg.ID == id {
				return q.last
			}
			return nil
		})
	acts := messageActions{stop: q.stop, copy: q.env.copy, rate: rate}
	mv := newMessageView(a, acts)
	q.last = mv
	q.answer.Add(mv.root)
	q.live, q.cancel = mv, cancel
	q.comp.setBusy(true)
	q.scroll.Show()
	q.Window.Resize(fyne.NewSize(quickWidth, 460))
	follow(q.env, r.Stream, func(acc ui.Answer) {
		mv.apply(acc)
		if acc.Done {
			if q.live == mv {
				q.live, q.cancel = nil, nil
				q.comp.setBusy(false)
				cancel()
			}
		}
		q.scroll.ScrollToBottom()
		if q.mirror != nil && q.last == mv {
			q.mirror(acc)
		}
	})
	return nil
}

// escape closes the popup; an answer waiting on a tool card there stops
// (nothing waits for an approval no one can see).
func (q *QuickAsk) escape() {
	if q.live != nil && waitingCall(q.live.msg) {
		q.stop()
	}
	q.Hide()
}

func (q *QuickAsk) stop() {
	if q.cancel != nil {
		q.cancel()
	}
}

// continueInWindow opens the exchange as a full conversation; an answer
// still streaming goes on streaming there.
func (q *QuickAsk) continueInWindow() {
	id, live, cancel := q.convID, q.live, q.cancel
	q.Hide()
	q.reset()
	if q.onCont == nil || id == "" {
		return
	}
	cv := q.onCont(id)
	if live != nil && cv != nil {
		q.mirror = cv.adopt(live.msg.ID, cancel)
		q.last = live
	}
}

// reset makes the next question start a new conversation.
func (q *QuickAsk) reset() {
	q.convID = ""
	q.answer.Objects = nil
	q.last = nil
	q.scroll.Hide()
	q.Window.Resize(fyne.NewSize(quickWidth, 10))
}
