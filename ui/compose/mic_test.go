package compose

import (
	"os"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"perch/ui"
	"perch/ui/internal/fake"
	"perch/ui/look"
)

func TestMicClipIsAttached(t *testing.T) {
	h := fake.NewEnv(t)
	c := New(h.Env, h.Win, "Message")
	h.Show(c.Root)
	test.Tap(c.mic)
	if !c.rec.active() || c.input.Objects[0] != c.rec.root {
		t.Fatal("recording panel not shown")
	}
	h.Rec.Last.Feed <- 0.4
	h.Rec.Last.Feed <- 0.7
	h.Loop.Until(t, "level", func() bool { return c.rec.meter.level == 0.7 })
	test.Tap(c.mic) // click again: stop
	h.Loop.Until(t, "clip chip", func() bool { return len(c.Pending) == 1 })
	if a := c.Pending[0]; a.Kind != ui.Audio || a.Name != "Voice clip 0:03.wav" {
		t.Fatalf("clip = %+v", a)
	}
	if c.input.Objects[0] != c.Entry {
		t.Fatal("entry not back after recording")
	}
}

func TestMicSilenceAndDeniedPermissionExplain(t *testing.T) {
	h := fake.NewEnv(t)
	c := New(h.Env, h.Win, "Message")
	h.Show(c.Root)
	test.Tap(c.mic)
	h.Rec.Last.Feed <- 0
	h.Loop.Drain()
	test.Tap(c.mic)
	if !strings.Contains(c.NoticeText.Text, look.PlatformText("Privacy & Security → Microphone", "sound settings")) || len(c.Pending) != 0 {
		t.Fatalf("silent clip: notice %q, %d chips", c.NoticeText.Text, len(c.Pending))
	}
	h.Rec.Err = errMicDenied
	test.Tap(c.mic)
	if c.rec.active() || c.NoticeText.Text != errMicDenied.Error() {
		t.Fatalf("denied: active %v notice %q", c.rec.active(), c.NoticeText.Text)
	}
}

var errMicDenied = os.ErrPermission
