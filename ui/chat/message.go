package chat

import (
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

	"perch/ui"
	"perch/ui/compose"
	"perch/ui/look"
	"perch/ui/tools"
)

// messageActions are what a message row's buttons do.
type messageActions struct {
	stop       func()
	regenerate func(m ui.Message)
	edit       func(m ui.Message, text string)
	copy       func(text string)
	Rate       func(m ui.Message, r ui.Rating) // nil: no feedback buttons
	Correct    func(m ui.Message, text string) // "this is what it should have said"
	useVersion func(m ui.Message, n int)       // nil: no ◀ ▶ (quick-ask)
	allowTrim  func(m ui.Message)              // nil: a full context only says so
	newChat    func()
	// focus gives the keyboard to a box the row just opened. It is the
	// window's canvas: a new box is on no canvas the driver knows of until
	// the next frame draws it, so asking the driver for its canvas fails.
	focus func(fyne.Focusable)
	tips  *look.Tips // the window's tooltips (nil: none)
}

// MessageView renders one message and updates in place while it streams.
type MessageView struct {
	Msg     ui.Message
	Acts    messageActions
	Root    *fyne.Container
	Body    *fyne.Container // segments
	Tools   *tools.Cards    // the answer's tool calls, as cards
	Segs    []fyne.CanvasObject
	kinds   []segment // kind and lang of each rendered segment
	Think   *widget.Accordion
	ThinkTx *widget.Label
	Status  *widget.Label
	Note    *fyne.Container // error / interrupted / stopped line
	Stats   *canvas.Text
	Actions *fyne.Container
	Marker  *fyne.Container // "earlier messages are not in the model's view", above this message
	// MarkerLine is the marker's text ("" none).
	MarkerLine string
	Editing    bool
	// EditEntry is the edit box while editing.
	EditEntry *look.ChatEntry
}

func newMessageView(m ui.Message, acts messageActions) *MessageView {
	v := &MessageView{Msg: m, Acts: acts}
	v.Body = container.NewVBox()
	v.Tools = tools.NewCards()
	v.ThinkTx = widget.NewLabel("")
	v.ThinkTx.Wrapping = fyne.TextWrapWord
	v.ThinkTx.TextStyle.Italic = true
	v.Think = widget.NewAccordion(widget.NewAccordionItem("Thoughts", v.ThinkTx))
	v.Status = widget.NewLabel("")
	v.Status.Importance = widget.LowImportance
	v.Status.Hide()
	v.Note = container.NewVBox()
	v.Stats = canvas.NewText("", theme.Color(theme.ColorNamePlaceHolder))
	v.Stats.TextSize = theme.Size(theme.SizeNameCaptionText)
	v.Actions = container.NewHBox()

	v.Marker = container.NewVBox()
	v.Marker.Hide()
	content := container.NewVBox(v.Think, v.Tools.Root, v.Status, v.Body, v.attachmentsRow(), v.Note)
	footer := container.New(look.FooterLayout{}, v.Actions, v.Stats)
	if m.Role == ui.User {
		bg := canvas.NewRectangle(look.ThemeColor(look.ColorBubble))
		bg.CornerRadius = 12
		bubble := container.NewStack(bg, container.NewPadded(content))
		// Indent user turns so they read as the other side of the conversation.
		v.Root = container.NewVBox(v.Marker, container.New(&indentLayout{left: 64}, bubble), footer)
	} else {
		head := container.NewHBox(widget.NewIcon(look.SparkIcon), roleLabel(m))
		v.Root = container.NewVBox(v.Marker, head, content, footer)
	}
	v.Update(m)
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

// Update re-renders the message's content, reusing segment widgets.
func (v *MessageView) Update(m ui.Message) {
	v.Msg = m
	if v.Editing {
		return
	}
	v.Tools.Show(m.Tools, m.State == ui.Streaming)
	v.renderBody(m.Text)
	if m.Thinking != "" {
		v.ThinkTx.SetText(strings.TrimSpace(m.Thinking))
		title := "Thoughts"
		if m.State == ui.Streaming && m.Text == "" {
			title = "Thinking…"
		}
		if v.Think.Items[0].Title != title {
			v.Think.Items[0].Title = title
			v.Think.Refresh()
		}
		v.Think.Show()
	} else {
		v.Think.Hide()
	}
	v.renderNote(m)
	v.Stats.Text = statsLine(m.Stats)
	v.Stats.Refresh()
	v.renderActions(m)
}

// setStatus shows a transient line such as "Loading model…".
func (v *MessageView) setStatus(s string) {
	if s == "" || v.Msg.State != ui.Streaming {
		v.Status.Hide()
		return
	}
	v.Status.SetText(s)
	v.Status.Show()
}

// apply shows the answer so far: its text, and once done its state,
// statistics and error; then its status line.
func (v *MessageView) apply(acc ui.Answer) {
	m := v.Msg
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
	v.Update(m)
	v.setStatus(acc.Status)
}

func (v *MessageView) renderBody(text string) {
	segs := splitMarkdown(text)
	if v.Msg.Role == ui.Assistant && len(segs) == 0 && v.Msg.State == ui.Streaming {
		segs = []segment{{text: "…"}}
	}
	// Keep widgets whose kind still matches; rebuild from the first change.
	keep := 0
	for keep < len(segs) && keep < len(v.kinds) && segs[keep].code == v.kinds[keep].code && segs[keep].lang == v.kinds[keep].lang {
		keep++
	}
	for i := 0; i < keep; i++ {
		setSegment(v.Segs[i], segs[i])
	}
	v.Segs = v.Segs[:keep]
	v.kinds = v.kinds[:keep]
	for _, s := range segs[keep:] {
		v.Segs = append(v.Segs, newSegment(s, v.Acts.copy))
		v.kinds = append(v.kinds, segment{code: s.code, lang: s.lang})
	}
	v.Body.Objects = append([]fyne.CanvasObject(nil), v.Segs...)
	v.Body.Refresh()
}

func (v *MessageView) attachmentsRow() fyne.CanvasObject {
	if len(v.Msg.Attachments) == 0 {
		return layout.NewSpacer()
	}
	row := container.NewHBox()
	for _, a := range v.Msg.Attachments {
		row.Add(compose.NewChip(a, nil))
	}
	return row
}

func (v *MessageView) renderNote(m ui.Message) {
	v.Note.Objects = nil
	switch m.State {
	case ui.Failed:
		p := look.NewProblemBox()
		p.Set(m.Err, m.ErrDetails)
		v.Note.Add(p.Root)
		v.Note.Add(container.NewHBox(v.fixButtons(m)...))
	case ui.Interrupted:
		v.Note.Add(look.Caption("Interrupted: Perch stopped before this answer finished. Regenerate to try again."))
	case ui.Stopped:
		v.Note.Add(look.Caption("Stopped"))
	}
	v.Note.Refresh()
}

func (v *MessageView) renderActions(m ui.Message) {
	v.Actions.Objects = nil
	small := func(icon fyne.Resource, tip string, f func()) fyne.CanvasObject {
		return look.NewTipButton("", icon, tip, v.Acts.tips, f)
	}
	switch {
	case m.Role == ui.Assistant && m.State == ui.Streaming:
		stop := widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), func() {
			if v.Acts.stop != nil {
				v.Acts.stop()
			}
		})
		stop.Importance = widget.LowImportance
		v.Actions.Add(stop)
	case m.Role == ui.Assistant:
		v.Actions.Add(small(theme.ContentCopyIcon(), "Copy the answer", func() { v.Acts.copy(v.Msg.Text) }))
		if v.Acts.regenerate != nil {
			v.Actions.Add(small(theme.ViewRefreshIcon(), "Answer again: a new version, the old one kept", func() { v.Acts.regenerate(v.Msg) }))
		}
		v.addVersionSwitch(m)
		for _, b := range v.feedbackButtons(m) {
			v.Actions.Add(b)
		}
	default:
		v.Actions.Add(small(theme.ContentCopyIcon(), "Copy your message", func() { v.Acts.copy(v.Msg.Text) }))
		v.Actions.Add(small(theme.DocumentCreateIcon(), "Edit your message and ask again", v.startEdit))
	}
	v.Actions.Refresh()
}

// startEdit swaps the user bubble's text for an entry with Send and
// Cancel; Enter sends and Shift+Enter adds a line, as in the composer, and
// Esc cancels.
func (v *MessageView) startEdit() {
	if v.Acts.edit == nil {
		return
	}
	v.Editing = true
	e := look.NewChatEntry()
	e.SetText(v.Msg.Text)
	e.SetMinRowsVisible(3)
	finish := func() {
		v.Editing = false
		v.Update(v.Msg)
	}
	sendEdit := func() {
		text := strings.TrimSpace(e.Text)
		if text == "" {
			return
		}
		finish()
		v.Acts.edit(v.Msg, text)
	}
	e.OnSend, e.OnEscape = sendEdit, finish
	send := widget.NewButtonWithIcon("Send", theme.MailSendIcon(), sendEdit)
	send.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", finish)
	v.Body.Objects = []fyne.CanvasObject{e, container.NewHBox(layout.NewSpacer(), cancel, send)}
	v.Body.Refresh()
	v.EditEntry = e
	v.takeKeys(e)
}

// takeKeys gives the keyboard to e, a box the row just opened.
func (v *MessageView) takeKeys(e fyne.Focusable) {
	if v.Acts.focus != nil {
		v.Acts.focus(e)
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
	box := &CodeBlock{Code: code}
	box.Copy = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { copyFn(box.Code.Text) })
	box.Copy.Importance = widget.LowImportance
	bg := canvas.NewRectangle(look.ThemeColor(look.ColorCode))
	bg.CornerRadius = 8
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	head := container.NewHBox(look.Caption(lang), layout.NewSpacer(), box.Copy)
	box.content = container.NewStack(bg,
		container.NewPadded(container.NewBorder(head, nil, nil, nil, container.NewHScroll(code))))
	box.ExtendBaseWidget(box)
	return box
}

func setSegment(o fyne.CanvasObject, s segment) {
	switch w := o.(type) {
	case *widget.RichText:
		w.ParseMarkdown(s.text)
	case *CodeBlock:
		if w.Code.Text != s.text {
			w.Code.SetText(s.text)
		}
	}
}

// CodeBlock is a monospace, selectable code block with a Copy button.
type CodeBlock struct {
	widget.BaseWidget
	Code    *widget.Label
	Copy    *widget.Button
	content fyne.CanvasObject
}

// CreateRenderer implements fyne.Widget.
func (b *CodeBlock) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(b.content) }

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
