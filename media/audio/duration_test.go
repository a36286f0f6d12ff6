package audio

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// TestDurationFromHeaders: a WAV's duration comes from its header,
// another container's from ffprobe, without decoding.
func TestDurationFromHeaders(t *testing.T) {
	need(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	for _, name := range []string{"a.wav", "a.m4a"} {
		p := filepath.Join(dir, name)
		run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=8000", p)
		d, err := Duration(context.Background(), readFile(t, p))
		if err != nil || d < 2.9 || d > 3.1 {
			t.Errorf("%s: %.3f s, %v; want 3 s", name, d, err)
		}
	}
	if _, err := Duration(context.Background(), bytes.Repeat([]byte{0}, 64)); err == nil {
		t.Error("64 zero bytes have a duration")
	}
}
