// Package sniff identifies a media file from its first bytes (never from its
// name) and says which of Perch's three paths, image, audio or video, takes it.
package sniff

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Kind is the path a file takes.
type Kind int

const (
	Unknown Kind = iota
	Image
	Audio
	Video
)

func (k Kind) String() string {
	switch k {
	case Image:
		return "image"
	case Audio:
		return "audio"
	case Video:
		return "video"
	}
	return "unknown"
}

// Format names a container or codec family, lower case ("png", "heic", "m4a").
type Format string

const (
	PNG  Format = "png"
	JPEG Format = "jpeg"
	GIF  Format = "gif"
	WebP Format = "webp"
	BMP  Format = "bmp"
	TIFF Format = "tiff"
	HEIC Format = "heic"
	AVIF Format = "avif"

	WAV  Format = "wav"
	MP3  Format = "mp3"
	M4A  Format = "m4a"
	AAC  Format = "aac" // raw ADTS stream
	FLAC Format = "flac"
	OGG  Format = "ogg" // Vorbis or FLAC in Ogg
	Opus Format = "opus"
	AIFF Format = "aiff"
	CAF  Format = "caf"

	MP4  Format = "mp4"
	MOV  Format = "mov"
	M4V  Format = "m4v"
	WebM Format = "webm"
	MKV  Format = "mkv"
	OGV  Format = "ogv" // Theora in Ogg
)

// Type is what Detect found.
type Type struct {
	Kind   Kind
	Format Format
	MIME   string
}

func (t Type) String() string { return fmt.Sprintf("%s (%s)", t.Kind, t.Format) }

var mimes = map[Format]string{
	PNG: "image/png", JPEG: "image/jpeg", GIF: "image/gif", WebP: "image/webp", BMP: "image/bmp",
	TIFF: "image/tiff", HEIC: "image/heic", AVIF: "image/avif",
	WAV: "audio/wav", MP3: "audio/mpeg", M4A: "audio/mp4", AAC: "audio/aac", FLAC: "audio/flac",
	OGG: "audio/ogg", Opus: "audio/ogg; codecs=opus", AIFF: "audio/aiff", CAF: "audio/x-caf",
	MP4: "video/mp4", MOV: "video/quicktime", M4V: "video/x-m4v", WebM: "video/webm",
	MKV: "video/x-matroska", OGV: "video/ogg",
}

func typ(k Kind, f Format) Type { return Type{Kind: k, Format: f, MIME: mimes[f]} }

// HeaderLen is how many leading bytes Detect needs at most.
const HeaderLen = 512

// Detect identifies b (the whole file or at least its first HeaderLen bytes).
// Unknown content gives an "unsupported file type" error that shows what was seen.
func Detect(b []byte) (Type, error) {
	if len(b) > HeaderLen {
		b = b[:HeaderLen]
	}
	if t, ok := detect(b); ok {
		return t, nil
	}
	return Type{}, fmt.Errorf("unsupported file type: %s (Perch takes PNG, JPEG, GIF, WebP, BMP, TIFF, HEIC, AVIF images; "+
		"WAV, MP3, M4A, AAC, FLAC, Ogg/Opus, AIFF, CAF audio; MP4, MOV, M4V, WebM, MKV video)", Describe(b))
}

// Describe says what kind of content b looks like, for errors. It never
// quotes the bytes: the file may be anything (a symlink to a secret), and
// errors end up in logs and on screen.
func Describe(b []byte) string {
	if len(b) == 0 {
		return "the file is empty"
	}
	printable := 0
	for _, c := range b {
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\r' || c == '\t' {
			printable++
		}
	}
	if printable == len(b) {
		return "it looks like text"
	}
	return "binary content of no known media format"
}

func detect(b []byte) (Type, bool) {
	has := func(off int, s string) bool { return len(b) >= off+len(s) && string(b[off:off+len(s)]) == s }
	switch {
	case has(0, "\x89PNG\r\n\x1a\n"):
		return typ(Image, PNG), true
	case has(0, "\xff\xd8\xff"):
		return typ(Image, JPEG), true
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return typ(Image, GIF), true
	case has(0, "RIFF") && has(8, "WEBP"):
		return typ(Image, WebP), true
	case has(0, "II*\x00"), has(0, "MM\x00*"), has(0, "II+\x00"), has(0, "MM\x00+"):
		return typ(Image, TIFF), true
	case has(0, "BM") && isBMP(b):
		return typ(Image, BMP), true
	case (has(0, "RIFF") || has(0, "RF64") || has(0, "BW64")) && has(8, "WAVE"):
		return typ(Audio, WAV), true
	case has(0, "fLaC"):
		return typ(Audio, FLAC), true
	case has(0, "FORM") && (has(8, "AIFF") || has(8, "AIFC")):
		return typ(Audio, AIFF), true
	case has(0, "caff"):
		return typ(Audio, CAF), true
	case has(0, "OggS"):
		return oggType(b), true
	case has(0, "\x1a\x45\xdf\xa3"):
		return ebmlType(b), true
	case has(4, "ftyp"):
		return isoType(b)
	case has(4, "moov"), has(4, "mdat"), has(4, "wide"), has(4, "free"), has(4, "skip"), has(4, "pnot"):
		// QuickTime files that predate the ftyp box open with one of these atoms.
		return typ(Video, MOV), true
	case has(0, "ID3"):
		return id3Type(b), true
	}
	if t, ok := mpegAudioType(b); ok {
		return t, true
	}
	return Type{}, false
}

// isBMP checks the DIB header size, since "BM" alone is too weak a signature.
func isBMP(b []byte) bool {
	if len(b) < 18 {
		return len(b) >= 2 // a truncated BMP still goes to the BMP decoder for a clear error
	}
	switch binary.LittleEndian.Uint32(b[14:]) {
	case 12, 16, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}

func oggType(b []byte) Type {
	// The first page's payload starts after 27 header bytes plus the segment table.
	if len(b) > 27 {
		p := b[min(len(b), 27+int(b[26])):]
		switch {
		case bytes.HasPrefix(p, []byte("OpusHead")):
			return typ(Audio, Opus)
		case bytes.HasPrefix(p, []byte("\x80theora")):
			return typ(Video, OGV)
		}
	}
	return typ(Audio, OGG)
}

func ebmlType(b []byte) Type {
	if bytes.Contains(b[:min(len(b), 64)], []byte("webm")) {
		return typ(Video, WebM)
	}
	return typ(Video, MKV)
}

// isoType reads the ISO-BMFF ftyp box: major brand, then compatible brands.
func isoType(b []byte) (Type, bool) {
	if len(b) < 12 {
		return Type{}, false
	}
	end := len(b)
	if size := int(binary.BigEndian.Uint32(b)); size >= 16 && size < end {
		end = size
	}
	brands := []string{string(b[8:12])}
	for off := 16; off+4 <= end; off += 4 {
		brands = append(brands, string(b[off:off+4]))
	}
	for _, br := range brands { // an AVIF may name mif1 first and avif later
		if br == "avif" || br == "avis" {
			return typ(Image, AVIF), true
		}
	}
	for _, br := range brands {
		switch br {
		case "heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1", "heif":
			return typ(Image, HEIC), true
		}
	}
	switch brands[0] {
	case "M4A ", "M4B ", "M4P ", "F4A ", "F4B ":
		return typ(Audio, M4A), true
	case "qt  ":
		return typ(Video, MOV), true
	case "M4V ", "M4VH", "M4VP":
		return typ(Video, M4V), true
	}
	if strings.HasPrefix(brands[0], "3g") || strings.HasPrefix(brands[0], "iso") || strings.HasPrefix(brands[0], "mp4") ||
		strings.HasPrefix(brands[0], "avc") || strings.HasPrefix(brands[0], "dash") || brands[0] == "F4V " || brands[0] == "MSNV" {
		return typ(Video, MP4), true
	}
	return Type{}, false
}

// id3Type skips an ID3v2 tag to look at the first audio frame; without one
// (or with the tag longer than what we have) the file is taken as MP3.
func id3Type(b []byte) Type {
	if len(b) >= 10 {
		n := 10 + int(b[6]&0x7f)<<21 | int(b[7]&0x7f)<<14 | int(b[8]&0x7f)<<7 | int(b[9]&0x7f)
		if n+2 <= len(b) {
			if t, ok := mpegAudioType(b[n:]); ok {
				return t
			}
		}
	}
	return typ(Audio, MP3)
}

// mpegAudioType recognises an MPEG-1/2 audio frame header or an ADTS (AAC) header.
func mpegAudioType(b []byte) (Type, bool) {
	if len(b) < 4 || b[0] != 0xff || b[1]&0xe0 != 0xe0 {
		return Type{}, false
	}
	if b[1]&0xf6 == 0xf0 { // 12-bit sync, layer 00: ADTS
		return typ(Audio, AAC), true
	}
	version, layer := (b[1]>>3)&3, (b[1]>>1)&3
	bitrate, rate := b[2]>>4, (b[2]>>2)&3
	if version == 1 || layer == 0 || bitrate == 0xf || rate == 3 {
		return Type{}, false
	}
	return typ(Audio, MP3), true
}
