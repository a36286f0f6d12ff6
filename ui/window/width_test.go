package window

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"perch/ui"
	"perch/ui/chat"
	"perch/ui/internal/fake"
	"perch/ui/look"
)

// Hostile text: a long sentence and a raw error with no place to break
// (a URL), as a failed download or a refused attachment gives.
var (
	longWords = strings.Repeat("The download stopped because something far away went wrong again. ", 12)
	noBreaks  = "Get \"https://huggingface.co/" + strings.Repeat("mlx-community/gemma-4-e2b-it-4bit/resolve/", 20) +
		"model.safetensors\": dial tcp: lookup huggingface.co: no such host"
)

// No page of the main window, and not the quick-ask popup, may need more
// width than the window has, whatever errors and messages it shows: the
// window would grow past the screen (issue: 980 → 2225 px after an offline
// download).
func TestNoViewWidensTheWindow(t *testing.T) {
	h := newHarness(t, fake.Script{Deltas: []fake.Delta{{Done: true, State: ui.Failed,
		Err: &ui.Problem{Summary: longWords, Details: noBreaks}}}})
	mw := h.ui.Main
	const width = 900
	fits := func(what string, w fyne.Window, limit float32) {
		t.Helper()
		h.loop.Drain()
		if got := w.Content().MinSize().Width; got > limit {
			t.Errorf("%s needs %.0f px, more than the window's %.0f", what, got, limit)
		}
	}
	// The chat: a failed answer, a long message without spaces, a composer notice.
	mw.SetDraft(noBreaks)
	mw.Submit()
	h.loop.Until(t, "failure", func() bool { return !mw.Busy() })
	mw.chat.Comp.ShowNotice(noBreaks)
	for _, v := range mw.chat.Views {
		if v.Msg.Role == ui.Assistant {
			v.Note.Objects[0].(*fyne.Container).Objects[1].(interface{ OpenAll() }).OpenAll() // Details open
		}
	}
	fits("the chat", mw.Window, width)
	// The models page: names are whole when they fit; a download that
	// failed offline, a page-wide error.
	mw.ShowModels()
	h.loop.Drain()
	for _, r := range mw.models.Rows {
		if got, want := r.Title.Size().Width, look.NewTitleRow(r.Title).Natural(); got < want {
			t.Errorf("%q is cut to %.0f px though it needs %.0f", r.Title.Text, got, want)
		}
	}
	m := h.catalog.List[0]
	m.Name = noBreaks[:120]
	m.Download = &ui.DownloadState{Total: 3 << 30, Err: longWords, ErrDetails: noBreaks}
	h.catalog.Update(m)
	mw.models.ShowErr(&ui.Problem{Summary: longWords, Details: noBreaks})
	for _, r := range mw.models.Rows {
		r.Problem.More.OpenAll()
	}
	mw.models.Problem.More.OpenAll()
	fits("the models page", mw.Window, width)
	// Settings: a refused save, a shortcut that did not take.
	mw.ShowSettings()
	mw.settings.Status.SetText("Not saved: " + noBreaks)
	h.ui.SetHotkey("", &ui.Problem{Summary: noBreaks})
	fits("the settings page", mw.Window, width)
	// The welcome page with a failed first download.
	mw.showPage("welcome", mw.welcomePage())
	mw.welcome.Problem.Set(longWords, noBreaks)
	mw.welcome.Problem.More.OpenAll()
	fits("the welcome page", mw.Window, width)
	// The quick-ask popup keeps its width too.
	q := h.ui.QuickAsk()
	q.Comp.ShowNotice(noBreaks)
	fits("the quick-ask popup", q.Window, chat.QuickWidth+4*theme.Padding())
}
