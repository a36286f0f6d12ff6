package window

import (
	"perch/ui"
	"perch/ui/look"

	"encoding/base64"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// MediaExtensions are the file types the attach dialog offers.
var MediaExtensions = []string{
	".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".heic", ".heif", ".avif",
	".wav", ".mp3", ".m4a", ".aac", ".flac", ".ogg", ".opus", ".aif", ".aiff", ".caf",
	".mp4", ".mov", ".m4v", ".webm", ".mkv",
}

// composer is the message input: entry, attachment chips, attach, mic and
// send/stop. Every way in (drop, dialog, paste, mic) ends in addPaths or
// addData.
type composer struct {
	env     *env
	win     fyne.Window
	entry   *look.ChatEntry
	chips   *fyne.Container
	chipRow *container.Scroll
	stack   *fyne.Container // chips above the input row
	pending []ui.Attachment
	working int // attachments still being read

	notice     *fyne.Container
	noticeText *widget.Label

	attach, send, stop *widget.Button
	mic                *micButton
	rec                *recorderPanel
	input              *fyne.Container // entry or recorder panel
	busy               bool

	onSend func(text string, atts []ui.Attachment) error
	onStop func()
	root   fyne.CanvasObject
}

func newComposer(e *env, win fyne.Window, placeholder string) *composer {
	c := &composer{env: e, win: win}
	c.entry = look.NewChatEntry()
	c.entry.SetPlaceHolder(placeholder)
	c.entry.SetMinRowsVisible(2)
	c.entry.OnSend = c.submit
	c.entry.OnPastePath = c.pastePaths
	c.chips = container.NewHBox()
	c.noticeText = widget.NewLabel("")
	c.noticeText.Wrapping = fyne.TextWrapWord
	dismiss := widget.NewButtonWithIcon("", theme.CancelIcon(), c.clearNotice)
	dismiss.Importance = widget.LowImportance
	c.notice = container.NewBorder(nil, nil, widget.NewIcon(theme.NewWarningThemedResource(theme.WarningIcon())), dismiss, c.noticeText)
	c.notice.Hide()

	c.attach = widget.NewButtonWithIcon("", theme.MailAttachmentIcon(), c.openDialog)
	c.attach.Importance = widget.LowImportance
	c.mic = newMicButton(c)
	c.send = widget.NewButtonWithIcon("", theme.MailSendIcon(), c.submit)
	c.send.Importance = widget.HighImportance
	c.stop = widget.NewButtonWithIcon("", theme.MediaStopIcon(), func() {
		if c.onStop != nil {
			c.onStop()
		}
	})
	c.stop.Importance = widget.DangerImportance
	c.stop.Hide()
	c.rec = newRecorderPanel(c)
	c.input = container.NewStack(c.entry)

	bg := canvas.NewRectangle(look.ThemeColor(theme.ColorNameInputBackground))
	bg.CornerRadius = 14
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	left := container.NewVBox(c.attach)
	right := container.NewHBox(container.NewVBox(c.mic), container.NewVBox(container.NewStack(c.send, c.stop)))
	row := container.NewBorder(nil, nil, left, right, c.input)
	c.chipRow = container.NewHScroll(c.chips)
	c.stack = container.NewVBox(c.chipRow, row)
	box := container.NewStack(bg, container.NewPadded(c.stack))
	c.root = container.NewVBox(c.notice, box)
	c.refreshChips()
	return c
}

// setBusy swaps Send for Stop while an answer streams.
func (c *composer) setBusy(b bool) {
	c.busy = b
	if b {
		c.send.Hide()
		c.stop.Show()
	} else {
		c.stop.Hide()
		c.send.Show()
	}
}

// setLocked disables input until a model is available.
func (c *composer) setLocked(locked bool, placeholder string) {
	for _, w := range []fyne.Disableable{c.entry, c.attach, c.send, c.mic} {
		if locked {
			w.Disable()
		} else {
			w.Enable()
		}
	}
	c.entry.SetPlaceHolder(placeholder)
}

func (c *composer) submit() {
	if c.busy || c.working > 0 {
		return
	}
	text := strings.TrimSpace(c.entry.Text)
	if text == "" && len(c.pending) == 0 {
		return
	}
	if c.onSend == nil {
		return
	}
	if err := c.onSend(text, append([]ui.Attachment(nil), c.pending...)); err != nil {
		c.showNotice(err.Error())
		return
	}
	c.entry.SetText("")
	c.pending = nil
	c.refreshChips()
	c.clearNotice()
}

// addPaths attaches files (drop, dialog, paste, command line).
func (c *composer) addPaths(paths []string) {
	c.working += len(paths)
	c.env.run(func() { // one at a time, so chips keep the drop's order
		for _, p := range paths {
			a, err := c.env.chat.AttachFile(p)
			c.env.do(func() { c.attached(a, err) })
		}
	})
}

// addData attaches bytes (a recorded clip, a pasted image).
func (c *composer) addData(name string, data []byte) {
	c.working++
	c.env.run(func() {
		a, err := c.env.chat.AttachData(name, data)
		c.env.do(func() { c.attached(a, err) })
	})
}

func (c *composer) attached(a ui.Attachment, err error) {
	c.working--
	if err != nil {
		c.showNotice(err.Error())
		return
	}
	for _, p := range c.pending {
		if p.ID == a.ID && p.ID != "" {
			return // the same file twice
		}
	}
	c.pending = append(c.pending, a)
	c.refreshChips()
	c.clearNotice()
}

func (c *composer) removeAt(i int) {
	if i < len(c.pending) {
		c.pending = append(c.pending[:i:i], c.pending[i+1:]...)
		c.refreshChips()
	}
}

func (c *composer) refreshChips() {
	c.chips.Objects = nil
	for i, a := range c.pending {
		c.chips.Add(newChip(a, func() { c.removeAt(i) }))
	}
	shown := c.chipRow.Visible()
	if len(c.pending) == 0 {
		c.chipRow.Hide()
	} else {
		c.chipRow.Show()
	}
	c.chips.Refresh()
	if shown != c.chipRow.Visible() {
		c.relayout() // the row appears or goes now, not at the next pointer move
	}
}

// relayout lays the window out again after the composer changed height.
func (c *composer) relayout() {
	if c.win != nil && c.win.Content() != nil {
		c.win.Content().Refresh()
	}
	c.stack.Refresh()
}

func (c *composer) showNotice(msg string) {
	c.noticeText.SetText(msg)
	c.notice.Show()
}

func (c *composer) clearNotice() {
	c.noticeText.SetText("")
	c.notice.Hide()
}

func (c *composer) openDialog() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			c.showNotice(err.Error())
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		c.addPaths([]string{path})
	}, c.win)
	d.SetFilter(storage.NewExtensionFileFilter(MediaExtensions))
	d.Show()
}

// pastePaths attaches clipboard text that names files or holds a data: URL
// (Fyne's clipboard carries text only). It reports whether it did.
func (c *composer) pastePaths(text string) bool {
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "data:") {
		name, data, err := decodeDataURL(text)
		if err != nil {
			return false
		}
		c.addData(name, data)
		return true
	}
	var paths []string
	for _, line := range strings.Split(text, "\n") {
		p := strings.TrimSpace(line)
		if u, err := url.Parse(p); err == nil && u.Scheme == "file" {
			p = u.Path
		}
		if !filepath.IsAbs(p) {
			return false
		}
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			return false
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return false
	}
	c.addPaths(paths)
	return true
}

// decodeDataURL reads a base64 data: URL such as a pasted image.
func decodeDataURL(s string) (name string, data []byte, err error) {
	head, payload, ok := strings.Cut(s, ",")
	if !ok || !strings.HasSuffix(head, ";base64") {
		return "", nil, errors.New("not a base64 data URL")
	}
	const limit = 64 << 20
	if len(payload) > limit*4/3+4 {
		return "", nil, errors.New("pasted data is too large")
	}
	data, err = base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, err
	}
	mime := strings.TrimSuffix(strings.TrimPrefix(head, "data:"), ";base64")
	ext := "bin"
	if _, sub, ok := strings.Cut(mime, "/"); ok && sub != "" && !strings.ContainsAny(sub, "/\\;") {
		ext = sub
	}
	return "Pasted." + ext, data, nil
}
