package window

import (
	"strings"

	"fyne.io/fyne/v2"
)

// Where the conversation is scrolled to when it opens or grows.

// layoutNow lays the conversation out at the scroll's width at once. Fyne
// lays new content out at the next frame; an offset set before then is
// clamped against the old content (a blank chat's: the top). Wrapped text
// is as tall as its width makes it, so a second pass may change the height.
func (v *chatView) layoutNow() {
	for range 3 {
		want := v.scroll.Content.MinSize().Max(v.scroll.Size())
		if want == v.scroll.Content.Size() {
			return
		}
		v.scroll.Content.Resize(want)
	}
}

// scrollToEnd shows the newest message.
func (v *chatView) scrollToEnd() {
	v.layoutNow()
	v.scroll.ScrollToBottom()
}

// scrollToMatch shows the first message whose text holds q (a search hit,
// any case), a little below the top; without one, the newest message.
func (v *chatView) scrollToMatch(q string) {
	q = strings.ToLower(strings.TrimSpace(q))
	if q == "" {
		v.scrollToEnd()
		return
	}
	v.layoutNow()
	for _, mv := range v.views {
		if strings.Contains(strings.ToLower(mv.msg.Text), q) {
			y := mv.root.Position().Y
			v.scroll.ScrollToOffset(fyne.NewPos(0, max(0, min(y-8, v.scroll.Content.Size().Height-v.scroll.Size().Height))))
			return
		}
	}
	v.scrollToEnd()
}
