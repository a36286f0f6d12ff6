// Package picture decodes image files into packed 8-bit RGB, the way the
// Gemma-4 reference (Pillow: open, exif_transpose, convert("RGB")) sees them:
// PNG, JPEG, GIF (first frame), WebP, BMP and TIFF in pure Go; HEIC and AVIF
// through the platform (ImageIO on macOS, libheif's heif-convert elsewhere).
// Baseline JPEGs use our own decoder (media/picture/jpeg), whose pixels equal
// libjpeg's; progressive and other JPEGs use image/jpeg.
//
// It owns the way from a file's bytes to pixels: the header read and the
// size limits (checked before any pixel is allocated), the choice of
// decoder, EXIF orientation, the conversion of every decoded form to RGB,
// and the decode Pool that the chat's thumbnails and the model's processor
// share. Data flows one way: bytes in (Config, Decode, Pool) → a decoder →
// a Source whose rows the resampler (media/resample) reads, or RGB.
package picture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/gif"
	gojpeg "image/jpeg"
	"image/png"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"

	"perch/media/picture/jpeg"
	"perch/media/sniff"
)

// RGB is an 8-bit RGB image, rows packed top to bottom, 3 bytes per pixel.
type RGB struct {
	W, H int
	Pix  []uint8 // [H][W][3]
}

// At returns the pixel at (x, y).
func (m *RGB) At(x, y int) [3]uint8 {
	i := 3 * (y*m.W + x)
	return [3]uint8{m.Pix[i], m.Pix[i+1], m.Pix[i+2]}
}

// Limits refuse pixel bombs before decoding.
type Limits struct {
	MaxSide   int   // widest or tallest side accepted
	MaxPixels int64 // width × height accepted
}

// DefaultLimits admit a 48 MP iPhone photo and long panoramas.
var DefaultLimits = Limits{MaxSide: 32768, MaxPixels: 64 << 20}

// ErrTooLarge marks an image over the Limits.
var ErrTooLarge = errors.New("image too large")

// Info describes a decoded image.
type Info struct {
	Format      sniff.Format
	Width       int // as stored, before orientation
	Height      int
	Orientation int // EXIF orientation applied (1 = none)
	Frames      int // GIF frame count (only the first is used); 1 otherwise
}

func (l Limits) check(w, h int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("image has no pixels (%dx%d)", w, h)
	}
	if w > l.MaxSide || h > l.MaxSide || int64(w)*int64(h) > l.MaxPixels {
		return fmt.Errorf("%w: %dx%d (limit %d px per side, %.0f MP)", ErrTooLarge, w, h, l.MaxSide, float64(l.MaxPixels)/1e6)
	}
	return nil
}

// Config reads an image's format and stored size from its header only.
func Config(data []byte) (Info, error) {
	t, err := sniff.Detect(data)
	if err != nil {
		return Info{}, err
	}
	if t.Kind != sniff.Image {
		return Info{}, fmt.Errorf("not an image: %s", t)
	}
	info := Info{Format: t.Format, Orientation: 1, Frames: 1}
	var cfg image.Config
	r := bytes.NewReader(data)
	switch t.Format {
	case sniff.PNG:
		cfg, err = png.DecodeConfig(r)
	case sniff.JPEG:
		cfg, err = gojpeg.DecodeConfig(r)
	case sniff.GIF:
		cfg, err = gif.DecodeConfig(r)
		info.Frames = gifFrames(data)
	case sniff.WebP:
		cfg, err = webp.DecodeConfig(r)
	case sniff.BMP:
		cfg, err = bmp.DecodeConfig(r)
	case sniff.TIFF:
		cfg, err = tiff.DecodeConfig(r)
	case sniff.HEIC, sniff.AVIF:
		cfg.Width, cfg.Height, err = heifSize(data)
	}
	if err != nil {
		return info, fmt.Errorf("reading %s header: %w", t.Format, err)
	}
	info.Width, info.Height = cfg.Width, cfg.Height
	if t.Format != sniff.HEIC && t.Format != sniff.AVIF {
		info.Orientation = orientation(data, t.Format)
	}
	return info, nil
}

// Decode decodes data (any supported image) to RGB with EXIF orientation
// applied, refusing images over lim before decoding pixels.
func Decode(ctx context.Context, data []byte, lim Limits) (*RGB, Info, error) {
	src, info, err := DecodeSource(ctx, data, lim)
	if err != nil {
		return nil, info, err
	}
	return src.RGB(), info, nil
}

// DecodeSource decodes data but converts it to RGB lazily: a resampler can
// read converted rows straight from the decoder's YCbCr planes.
func DecodeSource(ctx context.Context, data []byte, lim Limits) (*Source, Info, error) {
	info, err := Config(data)
	if err != nil {
		return nil, info, err
	}
	if err := lim.check(info.Width, info.Height); err != nil {
		return nil, info, err
	}
	decodes.Add(1)
	var m image.Image
	r := bytes.NewReader(data)
	switch info.Format {
	case sniff.PNG:
		m, err = png.Decode(r)
	case sniff.JPEG:
		m, err = jpeg.Decode(ctx, data, lim.check)
		if errors.Is(err, jpeg.ErrNotBaseline) {
			m, err = gojpeg.Decode(r)
		}
	case sniff.GIF:
		m, err = decodeGIF(r, info)
	case sniff.WebP:
		m, err = webp.Decode(r)
	case sniff.BMP:
		m, err = bmp.Decode(r)
	case sniff.TIFF:
		m, err = tiff.Decode(r)
	case sniff.HEIC, sniff.AVIF:
		img, err := Platform.Decode(ctx, data, info.Format, lim)
		if err != nil {
			return nil, info, err
		}
		return FromRGB(img), info, nil
	}
	if err != nil {
		return nil, info, fmt.Errorf("decoding %s: %w", info.Format, err)
	}
	if b := m.Bounds(); b.Dx() != info.Width || b.Dy() != info.Height {
		return nil, info, fmt.Errorf("decoding %s: header says %dx%d, pixels are %dx%d", info.Format, info.Width, info.Height, b.Dx(), b.Dy())
	}
	if info.Orientation == 1 && m.Bounds().Min == (image.Point{}) {
		switch m := m.(type) {
		case *image.YCbCr:
			if info.Format == sniff.JPEG {
				return &Source{w: info.Width, h: info.Height, ycc: m}, info, nil
			}
		case *image.Gray: // any format: 1 byte a pixel until a row is read
			return &Source{w: info.Width, h: info.Height, gray: m}, info, nil
		}
	}
	return FromRGB(Orient(toRGB(m, info.Format == sniff.WebP), info.Orientation)), info, nil
}

// decodeGIF returns the first frame on the logical screen, as Pillow shows it.
func decodeGIF(r *bytes.Reader, info Info) (image.Image, error) {
	m, err := gif.Decode(r)
	if err != nil {
		return nil, err
	}
	if m.Bounds() == image.Rect(0, 0, info.Width, info.Height) {
		return m, nil
	}
	p, ok := m.(*image.Paletted)
	if !ok {
		return m, nil
	}
	canvas := image.NewPaletted(image.Rect(0, 0, info.Width, info.Height), p.Palette)
	r2 := p.Rect.Intersect(canvas.Rect)
	for y := r2.Min.Y; y < r2.Max.Y; y++ {
		copy(canvas.Pix[canvas.PixOffset(r2.Min.X, y):][:r2.Dx()], p.Pix[p.PixOffset(r2.Min.X, y):][:r2.Dx()])
	}
	return canvas, nil
}

// FromImage converts an already decoded image (such as a platform-rendered
// video frame) to RGB with the same rules as Decode.
func FromImage(m image.Image) *RGB { return toRGB(m, false) }
