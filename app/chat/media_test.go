package chat

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"perch/ui"
)

func TestVideoChipHasDurationAndFirstFrame(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed (make deps installs it); it makes the test video")
	}
	p := filepath.Join(t.TempDir(), "clip.mp4")
	out, err := exec.Command("ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=duration=3:size=320x240:rate=10",
		"-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", p).CombinedOutput()
	if err != nil {
		t.Skipf("ffmpeg could not make a test video here: %v %s", err, out)
	}
	f := newFixture(t, &fakeEngine{}, e2b)
	f.svc.probe = MediaProbe{Video: VideoFrame}
	a, err := f.svc.AttachFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Kind != ui.Video || a.Duration.Round(100*time.Millisecond) != 3*time.Second || a.Width != 320 || a.Height != 240 {
		t.Fatalf("video chip: %+v", a)
	}
	if a.Thumb == nil || a.Thumb.Bounds().Dx() != thumbSide {
		t.Fatalf("no first-frame thumbnail: %v", a.Thumb)
	}
	// A file that only claims to be a video is refused with the reason.
	if _, err := f.svc.AttachData("fake.mp4", mp4Bytes()); err == nil {
		t.Fatal("a broken video was accepted")
	}
}
