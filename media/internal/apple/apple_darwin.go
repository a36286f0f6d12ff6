//go:build darwin

// Package apple holds the small helpers the macOS media paths share:
// turning a Core Image image into Go pixels, temp files with the extension
// AVFoundation needs, and CMTime conversions.
package apple

import (
	"bytes"
	"errors"
	"image"
	"math"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/progrium/darwinkit/macos/coreimage"
	"github.com/progrium/darwinkit/macos/coremedia"
	"github.com/progrium/darwinkit/objc"
	"golang.org/x/image/tiff"
)

// formatRGBA8 is kCIFormatRGBA8 (darwinkit keeps the constant unexported).
const formatRGBA8 = coreimage.Format(264)

// Render draws img into 8-bit RGBA in the image's own colour space (no
// colour management, like Pillow, which ignores ICC profiles) and decodes it.
func Render(img coreimage.Image) (image.Image, error) {
	if img.IsNil() {
		return nil, errors.New("the system could not decode the image")
	}
	cs := img.ColorSpace()
	if cs == 0 {
		return nil, errors.New("the image has no colour space")
	}
	ctx := coreimage.NewContext()
	b := ctx.TIFFRepresentationOfImageFormatColorSpaceOptions(img, formatRGBA8, cs, nil)
	if len(b) == 0 {
		return nil, errors.New("the system could not render the image")
	}
	return tiff.Decode(bytes.NewReader(b))
}

// TempFile writes data to a private temp file named for its container
// (AVFoundation picks the demuxer from the extension); call the cleanup.
func TempFile(data []byte, ext string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "perch-av-")
	if err != nil {
		return "", nil, err
	}
	p := filepath.Join(dir, "media."+ext)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return p, func() { os.RemoveAll(dir) }, nil
}

// Time converts seconds to a CMTime with a 600 timescale.
func Time(s float64) coremedia.Time {
	return coremedia.Time{Value: int64(math.Round(s * 600)), Timescale: 600, Flags: 1}
}

// Seconds converts a CMTime; invalid or indefinite times are 0.
func Seconds(t coremedia.Time) float64 {
	if t.Flags&1 == 0 || t.Timescale <= 0 {
		return 0
	}
	return float64(t.Value) / float64(t.Timescale)
}

// Release drops a +1 reference to a Core Foundation object (CMSampleBuffer…).
func Release(ref uintptr) {
	if ref != 0 {
		objc.ObjectFrom(unsafe.Pointer(ref)).Release()
	}
}

// ErrUnsupported marks a container AVFoundation cannot open.
var ErrUnsupported = errors.New("not readable by AVFoundation")
