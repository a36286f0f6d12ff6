package sniff

import (
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	cases := []struct {
		head string
		kind Kind
		f    Format
	}{
		{"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", Image, PNG},
		{"\xff\xd8\xff\xe0\x00\x10JFIF", Image, JPEG},
		{"GIF89a\x01\x00\x01\x00", Image, GIF},
		{"RIFF\x10\x00\x00\x00WEBPVP8 ", Image, WebP},
		{"BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00", Image, BMP},
		{"II*\x00\x08\x00\x00\x00", Image, TIFF},
		{"MM\x00*\x00\x00\x00\x08", Image, TIFF},
		{"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic", Image, HEIC},
		{"\x00\x00\x00\x1cftypmif1\x00\x00\x00\x00mif1avifmiaf", Image, AVIF},
		{"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf", Image, AVIF},
		{"RIFF\x24\x00\x00\x00WAVEfmt ", Audio, WAV},
		{"RF64\xff\xff\xff\xffWAVEds64", Audio, WAV},
		{"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64", Audio, MP3},
		{"\xff\xfb\x90\x64\x00\x00", Audio, MP3},
		{"\xff\xf1\x50\x80\x02\x1f\xfc", Audio, AAC},
		{"\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00M4A isommp42", Audio, M4A},
		{"fLaC\x00\x00\x00\x22", Audio, FLAC},
		{"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x13OpusHead", Audio, Opus},
		{"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x1e\x01vorbis", Audio, OGG},
		{"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x2a\x80theora", Video, OGV},
		{"FORM\x00\x00\x10\x00AIFFCOMM", Audio, AIFF},
		{"FORM\x00\x00\x10\x00AIFCFVER", Audio, AIFF},
		{"caff\x00\x01\x00\x00desc", Audio, CAF},
		{"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41", Video, MP4},
		{"\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00qt  ", Video, MOV},
		{"\x00\x00\x00\x08wide\x00\x00\x00\x00mdat", Video, MOV},
		{"\x00\x00\x00\x1cftypM4V \x00\x00\x00\x01M4V M4A mp42", Video, M4V},
		{"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x84webm", Video, WebM},
		{"\x1a\x45\xdf\xa3\xa3\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x88matroska", Video, MKV},
	}
	for _, c := range cases {
		got, err := Detect([]byte(c.head))
		if err != nil || got.Kind != c.kind || got.Format != c.f || got.MIME == "" {
			t.Errorf("%q: got %v %q, err %v; want %v %v", c.head, got, got.MIME, err, c.kind, c.f)
		}
	}
}

func TestUnknownSaysWhatItSaw(t *testing.T) {
	for _, head := range []string{"", "hello world, not media", "%PDF-1.7\n", "PK\x03\x04", "BM garbage garbage garbage", "\xff\xff\xff\xff"} {
		_, err := Detect([]byte(head))
		if err == nil || !strings.Contains(err.Error(), "unsupported file type") {
			t.Errorf("%q: got %v", head, err)
		}
	}
	_, err := Detect([]byte("%PDF-1.7\n"))
	if !strings.Contains(err.Error(), "it looks like text") || strings.Contains(err.Error(), "PDF") {
		t.Errorf("the error should say what it saw without quoting it: %v", err)
	}
}

func FuzzDetect(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"))
	f.Add([]byte("ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64"))
	f.Add([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ty, err := Detect(b)
		if err == nil && (ty.Kind == Unknown || ty.Format == "" || ty.MIME == "") {
			t.Fatalf("accepted without a type: %+v", ty)
		}
	})
}

// TestDescribeQuotesNoBytes: an unsupported file's error says what kind of
// content it is and quotes none of it (it may be a symlinked secret).
func TestDescribeQuotesNoBytes(t *testing.T) {
	for _, b := range [][]byte{[]byte("root:x:0:0:root:/root:/bin/bash\n"), {0x7f, 'E', 'L', 'F', 2, 1, 1, 0}} {
		_, err := Detect(b)
		if err == nil || strings.Contains(err.Error(), "root") || strings.Contains(err.Error(), "ELF") || strings.Contains(err.Error(), "7f") {
			t.Errorf("%q: %v", b, err)
		}
	}
}
