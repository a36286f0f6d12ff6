package window

import (
	"perch/ui"
	"perch/ui/look"

	"errors"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// messageActions are what a message row's buttons do.
type messageActions struct {
	stop       func()
	regenerate func(m ui.Message)
	edit       func(m ui.Message, text string)
	copy       func(text string)
	rate       func(m ui.Message, r ui.Rating) // nil: no feedback buttons
	correct    func(m ui.Message, text string) // "this is what it should have said"
	useVersion func(m ui.Message, n int)       // nil: no ◀ ▶ (quick-ask)
	allowTrim  func(m ui.Message)              // nil: a full context only says so
	newChat    func()
	// focus gives the keyboard to a box the row just opened. It is the
	// window's canvas: a new box is on no canvas the driver knows of until
	// the next frame draws it, so asking the driver for its canvas fails.
	focus func(fyne.Focusable)
	tips  *look.Tips // the window's tooltips (nil: none)
}

// messageView renders one message and updates in place while it streams.
type messageView struct {
	msg     ui.Message
	acts    messageActions
	root    *fyne.Container
	body    *fyne.Container // segments
	tools   *toolCards      // the answer's tool calls, as cards
	segs    []fyne.CanvasObject
	kinds   []segment // kind and lang of each rendered segment
	think   *widget.Accordion
	thinkTx *widget.Label
	status  *widget.Label
	note    *fyne.Container // error / interrupted / stopped line
	stats   *canvas.Text
	actions *fyne.Container
	marker  *fyne.Container // "earlier messages are not in the model's view", above this message
	// markerLine is the marker's text ("" none).
	markerLine string
	editing    bool
	// editEntry is the edit box while editing.
	editEntry *look.ChatEntry
}

func newMessageView(m ui.Message, acts messageActions) *messageView {
	v := &messageView{msg: m, acts: acts}
	v.body = container.NewVBox()
	v.tools = newToolCards()
	v.thinkTx = widget.NewLabel("")
	v.thinkTx.Wrapping = fyne.TextWrapWord
	v.thinkTx.TextStyle.Italic = true
	v.think = widget.NewAccordion(widget.NewAccordionItem("Thoughts", v.thinkTx))
	v.status = widget.NewLabel("")
	v.status.Importance = widget.LowImportance
	v.status.Hide()
	v.note = container.NewVBox()
	v.stats = canvas.NewText("", theme.Color(theme.ColorNamePlaceHolder))
	v.stats.TextSize = theme.Size(theme.SizeNameCaptionText)
	v.actions = container.NewHBox()

	v.marker = container.NewVBox()
	v.marker.Hide()
	content := container.NewVBox(v.think, v.tools.root, v.status, v.body, v.attachmentsRow(), v.note)
	footer := container.New(look.FooterLayout{}, v.actions, v.stats)
	if m.Role == ui.User {
		bg := canvas.NewRectangle(look.ThemeColor(look.ColorBubble))
		bg.CornerRadius = 12
		bubble := container.NewStack(bg, container.NewPadded(content))
		// Indent user turns so they read as the other side of the conversation.
		v.root = container.NewVBox(v.marker, container.New(&indentLayout{left: 64}, bubble), footer)
	} else {
		head := container.NewHBox(widget.NewIcon(look.SparkIcon), roleLabel(m))
		v.root = container.NewVBox(v.marker, head, content, footer)
	}
	v.update(m)
	return v
}

func roleLabel(m ui.Message) fyne.CanvasObject {
	name := "Gemma"
	if m.Model != "" {
		name = m.Model
	}
	l := widget.NewLabelWithStyle(name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	return l
}

// update re-renders the message's content, reusing segment widgets.
func (v *messageView) update(m ui.Message) {
	v.msg = m
	if v.editing {
		return
	}
	v.tools.show(m.Tools, m.State == ui.Streaming)
	v.renderBody(m.Text)
	if m.Thinking != "" {
		v.thinkTx.SetText(strings.TrimSpace(m.Thinking))
		title := "Thoughts"
		if m.State == ui.Streaming && m.Text == "" {
			title = "Thinking…"
		}
		if v.think.Items[0].Title != title {
			v.think.Items[0].Title = title
			v.think.Refresh()
		}
		v.think.Show()
	} else {
		v.think.Hide()
	}
	v.renderNote(m)
	v.stats.Text = statsLine(m.Stats)
	v.stats.Refresh()
	v.renderActions(m)
}

// setStatus shows a transient line such as "Loading model…".
func (v *messageView) setStatus(s string) {
	if s == "" || v.msg.State != ui.Streaming {
		v.status.Hide()
		return
	}
	v.status.SetText(s)
	v.status.Show()
}

// apply shows the answer so far: its text, and once done its state,
// statistics and error; then its status line.
func (v *messageView) apply(acc ui.Answer) {
	m := v.msg
	m.Text, m.Thinking, m.Tools = acc.Text, acc.Thinking, acc.Tools
	if acc.View != nil {
		m.View = *acc.View
	}
	if acc.Done {
		m.State, m.Stats = acc.State, acc.Stats
		if acc.Err != nil {
			m.Err, m.ErrDetails = acc.Err.Error(), ""
			var pr *ui.Problem
			if errors.As(acc.Err, &pr) {
				m.ErrDetails = pr.Details
			}
			var full *ui.ContextFullError
			m.ContextFull = errors.As(acc.Err, &full)
		}
	}
	v.update(m)
	v.setStatus(acc.Status)
}

func (v *messageView) renderBody(text string) {
	segs := splitMarkdown(text)
	if v.msg.Role == ui.Assistant && len(segs) == 0 && v.msg.State == ui.Streaming {
		segs = []segment{{text: "…"}}
	}
	// Keep widgets whose kind still matches; rebuild from the first change.
	keep := 0
	for keep < len(segs) && keep < len(v.kinds) && segs[keep].code == v.kinds[keep].code && segs[keep].lang == v.kinds[keep].lang {
		keep++
	}
	for i := 0; i < keep; i++ {
		setSegment(v.segs[i], segs[i])
	}
	v.segs = v.segs[:keep]
	v.kinds = v.kinds[:keep]
	for _, s := range segs[keep:] {
		v.segs = append(v.segs, newSegment(s, v.acts.copy))
		v.kinds = append(v.kinds, segment{code: s.code, lang: s.lang})
	}
	v.body.Objects = append([]fyne.CanvasObject(nil), v.segs...)
	v.body.Refresh()
}

func (v *messageView) attachmentsRow() fyne.CanvasObject {
	if len(v.msg.Attachments) == 0 {
		return layout.NewSpacer()
	}
	row := container.NewHBox()
	for _, a := range v.msg.Attachments {
		row.Add(newChip(a, nil))
	}
	return row
}

func (v *messageView) renderNote(m ui.Message) {
	v.note.Objects = nil
	switch m.State {
	case ui.Failed:
		p := look.NewProblemBox()
		p.Set(m.Err, m.ErrDetails)
		v.note.Add(p.Root)
		v.note.Add(container.NewHBox(v.fixButtons(m)...))
	case ui.Interrupted:
		v.note.Add(look.Caption("Interrupted: Perch stopped before this answer finished. Regenerate to try again."))
	case ui.Stopped:
		v.note.Add(look.Caption("Stopped"))
	}
	v.note.Refresh()
}

func (v *messageView) renderActions(m ui.Message) {
	v.actions.Objects = nil
	small := func(icon fyne.Resource, tip string, f func()) fyne.CanvasObject {
		return look.NewTipButton("", icon, tip, v.acts.tips, f)
	}
	switch {
	case m.Role == ui.Assistant && m.State == ui.Streaming:
		stop := widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), func() {
			if v.acts.stop != nil {
				v.acts.stop()
			}
		})
		stop.Importance = widget.LowImportance
		v.actions.Add(stop)
	case m.Role == ui.Assistant:
		v.actions.Add(small(theme.ContentCopyIcon(), "Copy the answer", func() { v.acts.copy(v.msg.Text) }))
		if v.acts.regenerate != nil {
			v.actions.Add(small(theme.ViewRefreshIcon(), "Answer again: a new version, the old one kept", func() { v.acts.regenerate(v.msg) }))
		}
		v.addVersionSwitch(m)
		for _, b := range v.feedbackButtons(m) {
			v.actions.Add(b)
		}
	default:
		v.actions.Add(small(theme.ContentCopyIcon(), "Copy your message", func() { v.acts.copy(v.msg.Text) }))
		v.actions.Add(small(theme.DocumentCreateIcon(), "Edit your message and ask again", v.startEdit))
	}
	v.actions.Refresh()
}

// startEdit swaps the user bubble's text for an entry with Send and
// Cancel; Enter sends and Shift+Enter adds a line, as in the composer, and
// Esc cancels.
func (v *messageView) startEdit() {
	if v.acts.edit == nil {
		return
	}
	v.editing = true
	e := look.NewChatEntry()
	e.SetText(v.msg.Text)
	e.SetMinRowsVisible(3)
	finish := func() {
		v.editing = false
		v.update(v.msg)
	}
	sendEdit := func() {
		text := strings.TrimSpace(e.Text)
		if text == "" {
			return
		}
		finish()
		v.acts.edit(v.msg, text)
	}
	e.OnSend, e.OnEscape = sendEdit, finish
	send := widget.NewButtonWithIcon("Send", theme.MailSendIcon(), sendEdit)
	send.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", finish)
	v.body.Objects = []fyne.CanvasObject{e, container.NewHBox(layout.NewSpacer(), cancel, send)}
	v.body.Refresh()
	v.editEntry = e
	v.takeKeys(e)
}

// takeKeys gives the keyboard to e, a box the row just opened.
func (v *messageView) takeKeys(e fyne.Focusable) {
	if v.acts.focus != nil {
		v.acts.focus(e)
	}
}

func newSegment(s segment, copyFn func(string)) fyne.CanvasObject {
	if !s.code {
		rt := widget.NewRichTextFromMarkdown(s.text)
		rt.Wrapping = fyne.TextWrapWord
		return rt
	}
	code := widget.NewLabel(s.text)
	code.TextStyle.Monospace = true
	code.Selectable = true
	lang := s.lang
	if lang == "" {
		lang = "code"
	}
	box := &codeBlock{code: code}
	box.copy = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { copyFn(box.code.Text) })
	box.copy.Importance = widget.LowImportance
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCode))
	bg.CornerRadius = 8
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	head := container.NewHBox(look.Caption(lang), layout.NewSpacer(), box.copy)
	box.content = container.NewStack(bg,
		container.NewPadded(container.NewBorder(head, nil, nil, nil, container.NewHScroll(code))))
	box.ExtendBaseWidget(box)
	return box
}

func setSegment(o fyne.CanvasObject, s segment) {
	switch w := o.(type) {
	case *widget.RichText:
		w.ParseMarkdown(s.text)
	case *codeBlock:
		if w.code.Text != s.text {
			w.code.SetText(s.text)
		}
	}
}

// codeBlock is a monospace, selectable code block with a Copy button.
type codeBlock struct {
	widget.BaseWidget
	code    *widget.Label
	copy    *widget.Button
	content fyne.CanvasObject
}

// CreateRenderer implements fyne.Widget.
func (b *codeBlock) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(b.content) }

func statsLine(s *ui.Stats) string {
	if s == nil || s.GeneratedTokens == 0 {
		return ""
	}
	parts := []string{fmt.Sprintf("%d tokens", s.GeneratedTokens)}
	if s.TokensPerSec > 0 {
		parts = append(parts, fmt.Sprintf("%.1f tok/s", s.TokensPerSec))
	}
	if s.TimeToFirst > 0 {
		parts = append(parts, fmt.Sprintf("%s to first token", roundDuration(s.TimeToFirst)))
	}
	return strings.Join(parts, " · ")
}

func roundDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// indentLayout insets its only child from the left.
type indentLayout struct{ left float32 }

func (l *indentLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(l.left, 0))
		o.Resize(fyne.NewSize(size.Width-l.left, size.Height))
	}
}

func (l *indentLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		s = s.Max(o.MinSize())
	}
	return fyne.NewSize(s.Width+l.left, s.Height)
}
