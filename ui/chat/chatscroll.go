package chat

import (
	"strings"

	"fyne.io/fyne/v2"
)

// Where the conversation is scrolled to when it opens or grows.

// layoutNow lays the conversation out at the scroll's width at once. Fyne
// lays new content out at the next frame; an offset set before then is
// clamped against the old content (a blank chat's: the top). Wrapped text
// is as tall as its width makes it, so a second pass may change the height.
func (v *View) layoutNow() {
	for range 3 {
		want := v.Scroll.Content.MinSize().Max(v.Scroll.Size())
		if want == v.Scroll.Content.Size() {
			return
		}
		v.Scroll.Content.Resize(want)
	}
}

// scrollToEnd shows the newest message.
func (v *View) scrollToEnd() {
	v.layoutNow()
	v.Scroll.ScrollToBottom()
}

// ScrollToMatch shows the first message whose text holds q (a search hit,
// any case), a little below the top; without one, the newest message.
func (v *View) ScrollToMatch(q string) {
	q = strings.ToLower(strings.TrimSpace(q))
	if q == "" {
		v.scrollToEnd()
		return
	}
	v.layoutNow()
	for _, mv := range v.Views {
		if strings.Contains(strings.ToLower(mv.Msg.Text), q) {
			y := mv.Root.Position().Y
			v.Scroll.ScrollToOffset(fyne.NewPos(0, max(0, min(y-8, v.Scroll.Content.Size().Height-v.Scroll.Size().Height))))
			return
		}
	}
	v.scrollToEnd()
}
