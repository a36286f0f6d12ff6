package window

import (
	"perch/ui"
	"perch/ui/look"

	"context"
	"errors"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"
)

// chatView shows one conversation and its composer, and runs the stream of
// the answer being generated.
type chatView struct {
	env    *env
	win    fyne.Window
	tips   *look.Tips // the window's tooltips
	convID string

	list   *fyne.Container
	scroll *container.Scroll
	views  []*messageView
	empty  fyne.CanvasObject
	comp   *composer

	live   *messageView
	cancel context.CancelFunc

	// onChange is called when the conversation list may have changed
	// (a new conversation, a new title).
	onChange func(convID string)
	// onNewChat starts a new chat (offered when a chat outgrew the model).
	onNewChat func()
	root      fyne.CanvasObject
}

func newChatView(e *env, win fyne.Window, placeholder string) *chatView {
	v := &chatView{env: e, win: win}
	v.list = container.NewVBox()
	// Extra room on the right keeps text clear of the scroll bar.
	v.scroll = container.NewVScroll(container.New(layout.NewCustomPaddedLayout(8, 8, 10, 18), v.list))
	title := widget.NewLabelWithStyle("What's on your mind?", fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	hint := widget.NewLabelWithStyle("Ask anything, or drop a photo, a voice memo or a video here.",
		fyne.TextAlignCenter, fyne.TextStyle{})
	hint.Importance = widget.LowImportance
	icon := widget.NewIcon(look.SparkIcon)
	v.empty = container.NewCenter(container.NewVBox(container.NewCenter(container.NewGridWrap(fyne.NewSquareSize(40), icon)), title, hint))
	v.comp = newComposer(e, win, placeholder)
	v.comp.onSend = v.send
	v.comp.onStop = v.stop
	// Start loading the model as soon as the user starts typing.
	v.comp.entry.OnChanged = func(s string) {
		if m := e.model.State(); s != "" && m.ID != "" && !m.Loaded && !m.Loading && m.Err == "" {
			e.model.Preload()
		}
	}
	body := container.NewStack(v.scroll, v.empty)
	v.root = container.NewBorder(nil, container.NewPadded(v.comp.root), nil, nil, body)
	v.show(nil)
	return v
}

// open shows a stored conversation ("" starts a blank one).
func (v *chatView) open(convID string) error {
	if v.live != nil && convID != v.convID {
		v.stop() // an answer keeps its partial text; it is saved as stopped
	}
	v.convID = convID
	if convID == "" {
		v.show(nil)
		return nil
	}
	msgs, err := v.env.chat.Messages(convID)
	if err != nil {
		v.show(nil)
		return err
	}
	v.show(msgs)
	return nil
}

func (v *chatView) show(msgs []ui.Message) {
	v.views = nil
	v.list.Objects = nil
	for _, m := range msgs {
		v.appendView(m)
	}
	v.placeMarker()
	v.list.Refresh()
	v.updateEmpty()
	v.scrollToEnd()
}

func (v *chatView) updateEmpty() {
	if len(v.views) == 0 {
		v.empty.Show()
	} else {
		v.empty.Hide()
	}
}

func (v *chatView) appendView(m ui.Message) *messageView {
	rate, correct := feedbackActions(v.env, func() string { return v.convID }, v.comp.showNotice,
		func(id string) *messageView { return viewByID(v.views, id) })
	mv := newMessageView(m, messageActions{
		stop:       v.stop,
		regenerate: v.regenerate,
		edit:       v.edit,
		copy:       v.env.copy,
		rate:       rate,
		correct:    correct,
		useVersion: v.useVersion,
		allowTrim:  v.allowTrim,
		focus:      v.win.Canvas().Focus,
		tips:       v.tips,
		newChat: func() {
			if v.onNewChat != nil {
				v.onNewChat()
			}
		},
	})
	v.views = append(v.views, mv)
	v.list.Add(mv.root)
	return mv
}

// truncateFrom removes the views from message id on.
func (v *chatView) truncateFrom(id string) {
	for i, mv := range v.views {
		if mv.msg.ID == id {
			v.views = v.views[:i]
			v.list.Objects = v.list.Objects[:i]
			v.list.Refresh()
			return
		}
	}
}

// viewOf is the view of message id, and drops the views after it.
func (v *chatView) viewOf(id string, dropAfter bool) *messageView {
	for i, mv := range v.views {
		if mv.msg.ID == id {
			if dropAfter {
				v.views = v.views[:i+1]
				v.list.Objects = v.list.Objects[:i+1]
				v.list.Refresh()
			}
			return mv
		}
	}
	return nil
}

var errBusy = errors.New("wait for the answer to finish, or stop it")

func (v *chatView) send(text string, atts []ui.Attachment) error {
	if v.live != nil {
		return errBusy
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := v.env.chat.Send(ctx, v.convID, text, atts)
	if err != nil {
		cancel()
		return err
	}
	newConv := v.convID != r.ConversationID
	v.convID = r.ConversationID
	v.appendView(r.User)
	v.start(r, cancel)
	if newConv || len(v.views) <= 2 {
		v.changed()
	}
	return nil
}

func (v *chatView) regenerate(m ui.Message) {
	if v.live != nil {
		v.stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := v.env.chat.Regenerate(ctx, v.convID, m.ID)
	if err != nil {
		cancel()
		v.comp.showNotice(err.Error())
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
	mv.update(a)
	v.placeMarker()
	v.scrollToEnd()
	follow(v.env, r.Stream, v.track(mv, cancel))
}

// useVersion shows version n of answer m.
func (v *chatView) useVersion(m ui.Message, n int) {
	if v.live != nil {
		return // the versions change once the answer being written is done
	}
	u, err := v.env.chat.UseVersion(v.convID, m.ID, n)
	if err != nil {
		v.comp.showNotice("Could not show that version: " + err.Error())
		return
	}
	if mv := v.viewOf(m.ID, false); mv != nil {
		mv.update(u)
	}
	v.placeMarker()
}

// allowTrim answers a chat that outgrew the model's context: from now on
// its oldest turns leave the model's view, and the answer is tried again.
func (v *chatView) allowTrim(m ui.Message) {
	if err := v.env.chat.AllowTrim(v.convID); err != nil {
		v.comp.showNotice(err.Error())
		return
	}
	v.regenerate(m)
}

// placeMarker shows, above the first message the newest answer's model
// saw, that what came before is out of its view.
func (v *chatView) placeMarker() {
	var view ui.ContextView
	for i := len(v.views) - 1; i >= 0; i-- {
		if m := v.views[i].msg; m.Role == ui.Assistant {
			view = m.View
			break
		}
	}
	at, text := view.FromID, markerMessages
	if at == "" {
		at, text = view.MediaFromID, markerAttachments
	}
	for _, mv := range v.views {
		if at != "" && mv.msg.ID == at {
			mv.setMarker(text)
		} else {
			mv.setMarker("")
		}
	}
}

func (v *chatView) edit(m ui.Message, text string) {
	if v.live != nil {
		v.stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := v.env.chat.Edit(ctx, v.convID, m.ID, text)
	if err != nil {
		cancel()
		v.comp.showNotice(err.Error())
		return
	}
	v.truncateFrom(m.ID)
	v.appendView(r.User)
	v.start(r, cancel)
}

// start shows the answer placeholder and follows its stream.
func (v *chatView) start(r ui.Reply, cancel context.CancelFunc) {
	a := r.Assistant
	a.State = ui.Streaming
	mv := v.appendView(a)
	v.list.Refresh()
	v.updateEmpty()
	v.scrollToEnd()
	follow(v.env, r.Stream, v.track(mv, cancel))
}

// adopt makes the streaming answer id (started elsewhere, such as in the
// quick-ask popup) live in this view and returns what updates it.
func (v *chatView) adopt(id string, cancel context.CancelFunc) func(ui.Answer) {
	for _, mv := range v.views {
		if mv.msg.ID == id {
			m := mv.msg
			m.State = ui.Streaming
			mv.update(m)
			return v.track(mv, cancel)
		}
	}
	return nil
}

// track marks mv as the live answer and returns the function that applies
// its stream to it.
func (v *chatView) track(mv *messageView, cancel context.CancelFunc) func(ui.Answer) {
	v.live, v.cancel = mv, cancel
	v.comp.setBusy(true)
	return func(acc ui.Answer) {
		atBottom := v.nearBottom()
		mv.apply(acc)
		if acc.View != nil || acc.Done {
			v.placeMarker()
		}
		if acc.Done && v.live == mv {
			v.live, v.cancel = nil, nil
			v.comp.setBusy(false)
			if cancel != nil {
				cancel()
			}
			v.changed()
		}
		if atBottom {
			v.scroll.ScrollToBottom()
		}
	}
}

// stop cancels the answer being generated; the service saves what arrived.
func (v *chatView) stop() {
	if v.cancel != nil {
		v.cancel()
	}
}

func (v *chatView) changed() {
	if v.onChange != nil {
		v.onChange(v.convID)
	}
}

func (v *chatView) nearBottom() bool {
	content := v.scroll.Content.MinSize().Height
	return v.scroll.Offset.Y+v.scroll.Size().Height >= content-80
}

// follow attaches a view to a reply's stream.
func follow(e *env, s *ui.Stream, apply func(ui.Answer)) { s.Follow(e.do, apply) }

// waitingCall reports whether one of m's calls waits for the user.
func waitingCall(m ui.Message) bool {
	for _, c := range m.Tools {
		if c.Waiting() {
			return true
		}
	}
	return false
}
