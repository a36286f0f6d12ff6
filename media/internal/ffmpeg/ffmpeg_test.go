package ffmpeg

import (
	"math"
	"os"
	"strings"
	"testing"
)

func TestParseFields(t *testing.T) {
	if r := Rate("30000/1001"); math.Abs(r-29.97) > 0.001 {
		t.Errorf("rate %v", r)
	}
	for _, s := range []string{"0/0", "1/0", "-5/1", "x", "", "100000/1"} {
		if r := Rate(s); r != 0 {
			t.Errorf("Rate(%q) = %v", s, r)
		}
	}
	for _, s := range []string{"nan", "-1", "inf", "N/A", "1e20"} {
		if v := Seconds(s); v != 0 {
			t.Errorf("Seconds(%q) = %v", s, v)
		}
	}
	if v := Seconds("12.5"); v != 12.5 {
		t.Errorf("Seconds = %v", v)
	}
}

// Inputs are sniffed, written privately and read with a forced demuxer and
// only the file protocol.
func TestInput(t *testing.T) {
	if _, err := NewInput([]byte("\x89PNG\r\n\x1a\n0000")); err == nil {
		t.Fatal("a PNG was handed to ffmpeg")
	}
	in, err := NewInput([]byte("\x00\x00\x00\x18ftypisom\x00\x00\x00\x00isommp41"))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(in.Args(), " ")
	if !strings.HasPrefix(args, "-protocol_whitelist file -f mov -i ") {
		t.Fatalf("args %q", args)
	}
	st, err := os.Stat(in.Path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("temp file %v %v", st, err)
	}
	in.Close()
	if _, err := os.Stat(in.Path); !os.IsNotExist(err) {
		t.Fatal("temp file left behind")
	}
}
