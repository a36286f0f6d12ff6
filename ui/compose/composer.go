package compose

import (
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

	"perch/ui"
	"perch/ui/look"
)

// MediaExtensions are the file types the attach dialog offers.
var MediaExtensions = []string{
	".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".heic", ".heif", ".avif",
	".wav", ".mp3", ".m4a", ".aac", ".flac", ".ogg", ".opus", ".aif", ".aiff", ".caf",
	".mp4", ".mov", ".m4v", ".webm", ".mkv",
}

// Composer is the message input: entry, attachment chips, attach, mic and
// send/stop. Every way in (drop, dialog, paste, mic) ends in addPaths or
// addData.
type Composer struct {
	env     *ui.Env
	win     fyne.Window
	Entry   *look.ChatEntry
	Chips   *fyne.Container
	ChipRow *container.Scroll
	Stack   *fyne.Container // chips above the input row
	Pending []ui.Attachment
	working int // attachments still being read

	Notice     *fyne.Container
	NoticeText *widget.Label

	attach, Send, Stop *widget.Button
	mic                *micButton
	rec                *recorderPanel
	input              *fyne.Container // entry or recorder panel
	busy               bool

	OnSend func(text string, atts []ui.Attachment) error
	OnStop func()
	Root   fyne.CanvasObject
}

func New(e *ui.Env, win fyne.Window, placeholder string) *Composer {
	c := &Composer{env: e, win: win}
	c.Entry = look.NewChatEntry()
	c.Entry.SetPlaceHolder(placeholder)
	c.Entry.SetMinRowsVisible(2)
	c.Entry.OnSend = c.Submit
	c.Entry.OnPastePath = c.pastePaths
	c.Chips = container.NewHBox()
	c.NoticeText = widget.NewLabel("")
	c.NoticeText.Wrapping = fyne.TextWrapWord
	dismiss := widget.NewButtonWithIcon("", theme.CancelIcon(), c.clearNotice)
	dismiss.Importance = widget.LowImportance
	c.Notice = container.NewBorder(nil, nil, widget.NewIcon(theme.NewWarningThemedResource(theme.WarningIcon())), dismiss, c.NoticeText)
	c.Notice.Hide()

	c.attach = widget.NewButtonWithIcon("", theme.MailAttachmentIcon(), c.openDialog)
	c.attach.Importance = widget.LowImportance
	c.mic = newMicButton(c)
	c.Send = widget.NewButtonWithIcon("", theme.MailSendIcon(), c.Submit)
	c.Send.Importance = widget.HighImportance
	c.Stop = widget.NewButtonWithIcon("", theme.MediaStopIcon(), func() {
		if c.OnStop != nil {
			c.OnStop()
		}
	})
	c.Stop.Importance = widget.DangerImportance
	c.Stop.Hide()
	c.rec = newRecorderPanel(c)
	c.input = container.NewStack(c.Entry)

	bg := canvas.NewRectangle(look.ThemeColor(theme.ColorNameInputBackground))
	bg.CornerRadius = 14
	bg.StrokeColor = look.ThemeColor(theme.ColorNameSeparator)
	bg.StrokeWidth = 1
	left := container.NewVBox(c.attach)
	right := container.NewHBox(container.NewVBox(c.mic), container.NewVBox(container.NewStack(c.Send, c.Stop)))
	row := container.NewBorder(nil, nil, left, right, c.input)
	c.ChipRow = container.NewHScroll(c.Chips)
	c.Stack = container.NewVBox(c.ChipRow, row)
	box := container.NewStack(bg, container.NewPadded(c.Stack))
	c.Root = container.NewVBox(c.Notice, box)
	c.refreshChips()
	return c
}

// SetBusy swaps Send for Stop while an answer streams.
func (c *Composer) SetBusy(b bool) {
	c.busy = b
	if b {
		c.Send.Hide()
		c.Stop.Show()
	} else {
		c.Stop.Hide()
		c.Send.Show()
	}
}

// SetLocked disables input until a model is available.
func (c *Composer) SetLocked(locked bool, placeholder string) {
	for _, w := range []fyne.Disableable{c.Entry, c.attach, c.Send, c.mic} {
		if locked {
			w.Disable()
		} else {
			w.Enable()
		}
	}
	c.Entry.SetPlaceHolder(placeholder)
}

func (c *Composer) Submit() {
	if c.busy || c.working > 0 {
		return
	}
	text := strings.TrimSpace(c.Entry.Text)
	if text == "" && len(c.Pending) == 0 {
		return
	}
	if c.OnSend == nil {
		return
	}
	if err := c.OnSend(text, append([]ui.Attachment(nil), c.Pending...)); err != nil {
		c.ShowNotice(err.Error())
		return
	}
	c.Entry.SetText("")
	c.Pending = nil
	c.refreshChips()
	c.clearNotice()
}

// AddPaths attaches files (drop, dialog, paste, command line).
func (c *Composer) AddPaths(paths []string) {
	c.working += len(paths)
	c.env.Run(func() { // one at a time, so chips keep the drop's order
		for _, p := range paths {
			a, err := c.env.Chat.AttachFile(p)
			c.env.Do(func() { c.attached(a, err) })
		}
	})
}

// addData attaches bytes (a recorded clip, a pasted image).
func (c *Composer) addData(name string, data []byte) {
	c.working++
	c.env.Run(func() {
		a, err := c.env.Chat.AttachData(name, data)
		c.env.Do(func() { c.attached(a, err) })
	})
}

func (c *Composer) attached(a ui.Attachment, err error) {
	c.working--
	if err != nil {
		c.ShowNotice(err.Error())
		return
	}
	for _, p := range c.Pending {
		if p.ID == a.ID && p.ID != "" {
			return // the same file twice
		}
	}
	c.Pending = append(c.Pending, a)
	c.refreshChips()
	c.clearNotice()
}

func (c *Composer) RemoveAt(i int) {
	if i < len(c.Pending) {
		c.Pending = append(c.Pending[:i:i], c.Pending[i+1:]...)
		c.refreshChips()
	}
}

func (c *Composer) refreshChips() {
	c.Chips.Objects = nil
	for i, a := range c.Pending {
		c.Chips.Add(NewChip(a, func() { c.RemoveAt(i) }))
	}
	shown := c.ChipRow.Visible()
	if len(c.Pending) == 0 {
		c.ChipRow.Hide()
	} else {
		c.ChipRow.Show()
	}
	c.Chips.Refresh()
	if shown != c.ChipRow.Visible() {
		c.relayout() // the row appears or goes now, not at the next pointer move
	}
}

// relayout lays the window out again after the composer changed height.
func (c *Composer) relayout() {
	if c.win != nil && c.win.Content() != nil {
		c.win.Content().Refresh()
	}
	c.Stack.Refresh()
}

func (c *Composer) ShowNotice(msg string) {
	c.NoticeText.SetText(msg)
	c.Notice.Show()
}

func (c *Composer) clearNotice() {
	c.NoticeText.SetText("")
	c.Notice.Hide()
}

func (c *Composer) openDialog() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			c.ShowNotice(err.Error())
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		c.AddPaths([]string{path})
	}, c.win)
	d.SetFilter(storage.NewExtensionFileFilter(MediaExtensions))
	d.Show()
}

// pastePaths attaches clipboard text that names files or holds a data: URL
// (Fyne's clipboard carries text only). It reports whether it did.
func (c *Composer) pastePaths(text string) bool {
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
	c.AddPaths(paths)
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
