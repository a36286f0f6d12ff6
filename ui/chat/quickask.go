package chat

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/compose"
	"perch/ui/look"
)

// QuickAsk is the small always-on-top popup the menubar and the global
// hotkey open: one entry that takes text, a dropped file or a voice clip,
// the answer streaming below it, and "Continue in window".
type QuickAsk struct {
	Window fyne.Window
	env    *ui.Env
	Comp   *compose.Composer
	answer *fyne.Container
	Scroll *container.Scroll
	footer *fyne.Container
	Model  *widget.Label
	ConvID string
	Live   *MessageView
	cancel context.CancelFunc
	onCont func(convID string) *View
	Last   *MessageView
	mirror func(ui.Answer) // the main window, after "Continue in window"
	shown  bool
}

const QuickWidth = 640

func NewQuickAsk(e *ui.Env, onContinue func(convID string) *View) *QuickAsk {
	var w fyne.Window
	if d, ok := e.App.Driver().(desktop.Driver); ok {
		w = d.CreateSplashWindow() // no title bar, like Spotlight
	} else {
		w = e.App.NewWindow("Quick Ask")
	}
	w.SetTitle("Perch Quick Ask")
	q := &QuickAsk{Window: w, env: e, onCont: onContinue}
	q.Comp = compose.New(e, w, "Ask Gemma anything…")
	q.Comp.Entry.SetMinRowsVisible(1)
	q.Comp.Entry.OnEscape = q.Escape
	q.Comp.OnSend = q.send
	q.Comp.OnStop = q.stop
	q.answer = container.NewVBox()
	q.Scroll = container.NewVScroll(container.New(layout.NewCustomPaddedLayout(4, 4, 8, 16), q.answer))
	q.Scroll.SetMinSize(fyne.NewSize(QuickWidth, 300))
	q.Model = widget.NewLabel("")
	q.Model.Importance = widget.LowImportance
	cont := widget.NewButtonWithIcon("Continue in window", theme.ViewFullScreenIcon(), q.ContinueInWindow)
	cont.Importance = widget.LowImportance
	closeBtn := widget.NewButtonWithIcon("", theme.CancelIcon(), q.Hide)
	closeBtn.Importance = widget.LowImportance
	q.footer = container.NewHBox(q.Model, layout.NewSpacer(), look.Caption("esc to close"), cont, closeBtn)
	q.Scroll.Hide()
	// A frameless popup needs its own edge to stand apart from the windows below.
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCard))
	bg.StrokeColor = look.ThemeColor(theme.ColorNameFocus)
	bg.StrokeWidth = 1.5
	w.SetContent(container.NewStack(bg, container.NewPadded(
		container.NewBorder(q.Comp.Root, q.footer, nil, nil, q.Scroll))))
	w.Canvas().SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			q.Escape()
		}
	})
	w.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) {
		var paths []string
		for _, u := range uris {
			if u.Scheme() == "file" {
				paths = append(paths, u.Path())
			}
		}
		q.Comp.AddPaths(paths)
	})
	if dw, ok := w.(desktop.Window); ok {
		dw.RequestAlwaysOnTop()
	}
	e.Model.Watch(func(s ui.ModelState) { e.Do(func() { q.modelChanged(s) }) })
	q.modelChanged(e.Model.State())
	w.Resize(fyne.NewSize(QuickWidth, 10))
	return q
}

// Show opens the popup centred on the screen, ready to type.
func (q *QuickAsk) Show() {
	q.shown = true
	q.modelChanged(q.env.Model.State()) // the adapter choice may have changed
	if s := q.env.Model.State(); s.ID != "" && !s.Loaded && !s.Loading {
		q.env.Model.Preload()
	}
	q.Window.CenterOnScreen()
	q.Window.Show()
	q.Window.RequestFocus()
	q.Window.Canvas().Focus(q.Comp.Entry)
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
func (q *QuickAsk) Attach(paths ...string) { q.Comp.AddPaths(paths) }

// SetDraft types text into the entry.
func (q *QuickAsk) SetDraft(text string) { q.Comp.Entry.SetText(text) }

// Submit sends the draft.
func (q *QuickAsk) Submit() { q.Comp.Submit() }

// Busy reports whether an answer is streaming.
func (q *QuickAsk) Busy() bool { return q.Live != nil }

// Answer is the last answer shown.
func (q *QuickAsk) Answer() (ui.Message, bool) {
	if q.Last == nil {
		return ui.Message{}, false
	}
	return q.Last.Msg, true
}

// AnswerText is the answer shown so far.
func (q *QuickAsk) AnswerText() string {
	if q.Last == nil {
		return ""
	}
	return q.Last.Msg.Text
}

func (q *QuickAsk) modelChanged(s ui.ModelState) {
	switch {
	case s.ID == "":
		q.Model.SetText("No model yet: open Perch to get one")
		q.Comp.SetLocked(true, "Get a model in Perch first")
	default:
		q.Model.SetText(s.Name + adapterSuffix(q.env))
		q.Comp.SetLocked(false, "Ask Gemma anything…")
	}
}

func (q *QuickAsk) send(text string, atts []ui.Attachment) error {
	if q.Live != nil {
		return errBusy
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := q.env.Chat.Send(ctx, q.ConvID, text, atts)
	if err != nil {
		cancel()
		return err
	}
	q.ConvID = r.ConversationID
	q.answer.Objects = nil
	q.mirror = nil
	question := widget.NewLabelWithStyle(look.Clip(text, 300), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	question.Wrapping = fyne.TextWrapWord
	q.answer.Add(question)
	a := r.Assistant
	a.State = ui.Streaming
	// Quick answers have no regenerate ("Continue in window" has it), but
	// take thumbs like any answer.
	convID := q.ConvID
	rate, _ := feedbackActions(q.env, func() string { return convID }, q.Comp.ShowNotice,
		func(id string) *MessageView {
			if q.Last != nil && q.Last.Msg.ID == id {
				return q.Last
			}
			return nil
		})
	acts := messageActions{stop: q.stop, copy: q.env.Copy, Rate: rate}
	mv := newMessageView(a, acts)
	q.Last = mv
	q.answer.Add(mv.Root)
	q.Live, q.cancel = mv, cancel
	q.Comp.SetBusy(true)
	q.Scroll.Show()
	q.Window.Resize(fyne.NewSize(QuickWidth, 460))
	follow(q.env, r.Stream, func(acc ui.Answer) {
		mv.apply(acc)
		if acc.Done {
			if q.Live == mv {
				q.Live, q.cancel = nil, nil
				q.Comp.SetBusy(false)
				cancel()
			}
		}
		q.Scroll.ScrollToBottom()
		if q.mirror != nil && q.Last == mv {
			q.mirror(acc)
		}
	})
	return nil
}

// Escape closes the popup; an answer waiting on a tool card there stops
// (nothing waits for an approval no one can see).
func (q *QuickAsk) Escape() {
	if q.Live != nil && waitingCall(q.Live.Msg) {
		q.stop()
	}
	q.Hide()
}

func (q *QuickAsk) stop() {
	if q.cancel != nil {
		q.cancel()
	}
}

// ContinueInWindow opens the exchange as a full conversation; an answer
// still streaming goes on streaming there.
func (q *QuickAsk) ContinueInWindow() {
	id, live, cancel := q.ConvID, q.Live, q.cancel
	q.Hide()
	q.reset()
	if q.onCont == nil || id == "" {
		return
	}
	cv := q.onCont(id)
	if live != nil && cv != nil {
		q.mirror = cv.adopt(live.Msg.ID, cancel)
		q.Last = live
	}
}

// reset makes the next question start a new conversation.
func (q *QuickAsk) reset() {
	q.ConvID = ""
	q.answer.Objects = nil
	q.Last = nil
	q.Scroll.Hide()
	q.Window.Resize(fyne.NewSize(QuickWidth, 10))
}

// adapterSuffix is " + my-style" for the adapter new conversations and
// quick-ask answer with ("" for none).
func adapterSuffix(e *ui.Env) string {
	if e.Feedback == nil {
		return ""
	}
	if _, name := e.Feedback.Adapter(""); name != "" {
		return " + " + name
	}
	return ""
}
