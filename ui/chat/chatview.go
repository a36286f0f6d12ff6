package chat

import (
	"context"
	"errors"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/compose"
	"perch/ui/look"
)

// View shows one conversation and its composer, and runs the stream of
// the answer being generated.
type View struct {
	env    *ui.Env
	win    fyne.Window
	Tips   *look.Tips // the window's tooltips
	ConvID string

	List   *fyne.Container
	Scroll *container.Scroll
	Views  []*MessageView
	empty  fyne.CanvasObject
	Comp   *compose.Composer

	Live   *MessageView
	cancel context.CancelFunc

	// OnChange is called when the conversation list may have changed
	// (a new conversation, a new title).
	OnChange func(convID string)
	// OnNewChat starts a new chat (offered when a chat outgrew the model).
	OnNewChat func()
	Root      fyne.CanvasObject
}

func NewView(e *ui.Env, win fyne.Window, placeholder string) *View {
	v := &View{env: e, win: win}
	v.List = container.NewVBox()
	// Extra room on the right keeps text clear of the scroll bar.
	v.Scroll = container.NewVScroll(container.New(layout.NewCustomPaddedLayout(8, 8, 10, 18), v.List))
	title := widget.NewLabelWithStyle("What's on your mind?", fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	hint := widget.NewLabelWithStyle("Ask anything, or drop a photo, a voice memo or a video here.",
		fyne.TextAlignCenter, fyne.TextStyle{})
	hint.Importance = widget.LowImportance
	icon := widget.NewIcon(look.SparkIcon)
	v.empty = container.NewCenter(container.NewVBox(container.NewCenter(container.NewGridWrap(fyne.NewSquareSize(40), icon)), title, hint))
	v.Comp = compose.New(e, win, placeholder)
	v.Comp.OnSend = v.send
	v.Comp.OnStop = v.Stop
	// Start loading the model as soon as the user starts typing.
	v.Comp.Entry.OnChanged = func(s string) {
		if m := e.Model.State(); s != "" && m.ID != "" && !m.Loaded && !m.Loading && m.Err == "" {
			e.Model.Preload()
		}
	}
	body := container.NewStack(v.Scroll, v.empty)
	v.Root = container.NewBorder(nil, container.NewPadded(v.Comp.Root), nil, nil, body)
	v.show(nil)
	return v
}

// Open shows a stored conversation ("" starts a blank one).
func (v *View) Open(convID string) error {
	if v.Live != nil && convID != v.ConvID {
		v.Stop() // an answer keeps its partial text; it is saved as stopped
	}
	v.ConvID = convID
	if convID == "" {
		v.show(nil)
		return nil
	}
	msgs, err := v.env.Chat.Messages(convID)
	if err != nil {
		v.show(nil)
		return err
	}
	v.show(msgs)
	return nil
}

func (v *View) show(msgs []ui.Message) {
	v.Views = nil
	v.List.Objects = nil
	for _, m := range msgs {
		v.appendView(m)
	}
	v.placeMarker()
	v.List.Refresh()
	v.updateEmpty()
	v.scrollToEnd()
}

func (v *View) updateEmpty() {
	if len(v.Views) == 0 {
		v.empty.Show()
	} else {
		v.empty.Hide()
	}
}

func (v *View) appendView(m ui.Message) *MessageView {
	rate, correct := feedbackActions(v.env, func() string { return v.ConvID }, v.Comp.ShowNotice,
		func(id string) *MessageView { return viewByID(v.Views, id) })
	mv := newMessageView(m, messageActions{
		stop:       v.Stop,
		regenerate: v.Regenerate,
		edit:       v.edit,
		copy:       v.env.Copy,
		Rate:       rate,
		Correct:    correct,
		useVersion: v.useVersion,
		allowTrim:  v.allowTrim,
		focus:      v.win.Canvas().Focus,
		tips:       v.Tips,
		newChat: func() {
			if v.OnNewChat != nil {
				v.OnNewChat()
			}
		},
	})
	v.Views = append(v.Views, mv)
	v.List.Add(mv.Root)
	return mv
}

// truncateFrom removes the views from message id on.
func (v *View) truncateFrom(id string) {
	for i, mv := range v.Views {
		if mv.Msg.ID == id {
			v.Views = v.Views[:i]
			v.List.Objects = v.List.Objects[:i]
			v.List.Refresh()
			return
		}
	}
}

// viewOf is the view of message id, and drops the views after it.
func (v *View) viewOf(id string, dropAfter bool) *MessageView {
	for i, mv := range v.Views {
		if mv.Msg.ID == id {
			if dropAfter {
				v.Views = v.Views[:i+1]
				v.List.Objects = v.List.Objects[:i+1]
				v.List.Refresh()
			}
			return mv
		}
	}
	return nil
}

var errBusy = errors.New("wait for the answer to finish, or stop it")

func (v *View) send(text string, atts []ui.Attachment) error {
	if v.Live != nil {
		return errBusy
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := v.env.Chat.Send(ctx, v.ConvID, text, atts)
	if err != nil {
		cancel()
		return err
	}
	newConv := v.ConvID != r.ConversationID
	v.ConvID = r.ConversationID
	v.appendView(r.User)
	v.start(r, cancel)
	if newConv || len(v.Views) <= 2 {
		v.changed()
	}
	return nil
}

func (v *View) Regenerate(m ui.Message) {
	if v.Live != nil {
		v.Stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := v.env.Chat.Regenerate(ctx, v.ConvID, m.ID)
	if err != nil {
		cancel()
		v.Comp.ShowNotice(err.Error())
		return
	}
	// The answer streams again in its place; what followed it is gone.
	mv := v.viewOf(m.ID, true)
	if mv == nil || r.Assistant.ID != m.ID {
		v.truncateFrom(m.ID)
		v.start(r, cancel)
		return
	}
	a := r.Assistant
	a.State = ui.Streaming
	mv.Update(a)
	v.placeMarker()
	v.scrollToEnd()
	follow(v.env, r.Stream, v.track(mv, cancel))
}

// useVersion shows version n of answer m.
func (v *View) useVersion(m ui.Message, n int) {
	if v.Live != nil {
		return // the versions change once the answer being written is done
	}
	u, err := v.env.Chat.UseVersion(v.ConvID, m.ID, n)
	if err != nil {
		v.Comp.ShowNotice("Could not show that version: " + err.Error())
		return
	}
	if mv := v.viewOf(m.ID, false); mv != nil {
		mv.Update(u)
	}
	v.placeMarker()
}

// allowTrim answers a chat that outgrew the model's context: from now on
// its oldest turns leave the model's view, and the answer is tried again.
func (v *View) allowTrim(m ui.Message) {
	if err := v.env.Chat.AllowTrim(v.ConvID); err != nil {
		v.Comp.ShowNotice(err.Error())
		return
	}
	v.Regenerate(m)
}

// placeMarker shows, above the first message the newest answer's model
// saw, that what came before is out of its view.
func (v *View) placeMarker() {
	var view ui.ContextView
	for i := len(v.Views) - 1; i >= 0; i-- {
		if m := v.Views[i].Msg; m.Role == ui.Assistant {
			view = m.View
			break
		}
	}
	at, text := view.FromID, MarkerMessages
	if at == "" {
		at, text = view.MediaFromID, markerAttachments
	}
	for _, mv := range v.Views {
		if at != "" && mv.Msg.ID == at {
			mv.setMarker(text)
		} else {
			mv.setMarker("")
		}
	}
}

func (v *View) edit(m ui.Message, text string) {
	if v.Live != nil {
		v.Stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := v.env.Chat.Edit(ctx, v.ConvID, m.ID, text)
	if err != nil {
		cancel()
		v.Comp.ShowNotice(err.Error())
		return
	}
	v.truncateFrom(m.ID)
	v.appendView(r.User)
	v.start(r, cancel)
}

// start shows the answer placeholder and follows its stream.
func (v *View) start(r ui.Reply, cancel context.CancelFunc) {
	a := r.Assistant
	a.State = ui.Streaming
	mv := v.appendView(a)
	v.List.Refresh()
	v.updateEmpty()
	v.scrollToEnd()
	follow(v.env, r.Stream, v.track(mv, cancel))
}

// adopt makes the streaming answer id (started elsewhere, such as in the
// quick-ask popup) live in this view and returns what updates it.
func (v *View) adopt(id string, cancel context.CancelFunc) func(ui.Answer) {
	for _, mv := range v.Views {
		if mv.Msg.ID == id {
			m := mv.Msg
			m.State = ui.Streaming
			mv.Update(m)
			return v.track(mv, cancel)
		}
	}
	return nil
}

// track marks mv as the live answer and returns the function that applies
// its stream to it.
func (v *View) track(mv *MessageView, cancel context.CancelFunc) func(ui.Answer) {
	v.Live, v.cancel = mv, cancel
	v.Comp.SetBusy(true)
	return func(acc ui.Answer) {
		atBottom := v.nearBottom()
		mv.apply(acc)
		if acc.View != nil || acc.Done {
			v.placeMarker()
		}
		if acc.Done && v.Live == mv {
			v.Live, v.cancel = nil, nil
			v.Comp.SetBusy(false)
			if cancel != nil {
				cancel()
			}
			v.changed()
		}
		if atBottom {
			v.Scroll.ScrollToBottom()
		}
	}
}

// Stop cancels the answer being generated; the service saves what arrived.
func (v *View) Stop() {
	if v.cancel != nil {
		v.cancel()
	}
}

func (v *View) changed() {
	if v.OnChange != nil {
		v.OnChange(v.ConvID)
	}
}

func (v *View) nearBottom() bool {
	content := v.Scroll.Content.MinSize().Height
	return v.Scroll.Offset.Y+v.Scroll.Size().Height >= content-80
}

// follow attaches a view to a reply's stream.
func follow(e *ui.Env, s *ui.Stream, apply func(ui.Answer)) { s.Follow(e.Do, apply) }

// waitingCall reports whether one of m's calls waits for the user.
func waitingCall(m ui.Message) bool {
	for _, c := range m.Tools {
		if c.Waiting() {
			return true
		}
	}
	return false
}
