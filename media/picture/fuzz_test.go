package picture

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"perch/media/sniff"
)

func seedImages(f *testing.F) {
	small := quadrants(9, 7)
	var j, p, g, b, t bytes.Buffer
	jpeg.Encode(&j, small, nil)
	jpeg.Encode(&p, image.NewGray(image.Rect(0, 0, 5, 5)), nil)
	gif.Encode(&g, small, nil)
	bmp.Encode(&b, small)
	tiff.Encode(&t, small, &tiff.Options{Compression: tiff.Deflate})
	for _, s := range [][]byte{j.Bytes(), withOrientation(j.Bytes(), 6), p.Bytes(), g.Bytes(), b.Bytes(), t.Bytes()} {
		f.Add(s)
	}
	pal := image.NewPaletted(image.Rect(0, 0, 3, 3), color.Palette{color.Black, color.NRGBA{1, 2, 3, 4}})
	f.Add(encodePNG(f, pal))
	f.Add(encodePNG(f, image.NewGray16(image.Rect(0, 0, 4, 4))))
	for _, name := range []string{"photo420.jpg", "photo.webp"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic\x00\x00\x00\x2cmeta\x00\x00\x00\x00\x00\x00\x00\x20iprp\x00\x00\x00\x18ipco\x00\x00\x00\x10ispe\x00\x00\x00\x00"))
}

// FuzzDecode: any bytes either decode within the limits (and within an
// allocation budget) or give an error; never a panic.
func FuzzDecode(f *testing.F) {
	seedImages(f)
	lim := Limits{MaxSide: 2048, MaxPixels: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := Config(data)
		if err != nil || info.Format == sniff.HEIC || info.Format == sniff.AVIF {
			return // HEIF pixels are decoded out of process
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, _, err := Decode(context.Background(), data, lim)
		runtime.ReadMemStats(&after)
		if err != nil {
			return
		}
		if m.W*m.H > int(lim.MaxPixels) || len(m.Pix) != 3*m.W*m.H {
			t.Fatalf("decoded %dx%d (%d bytes) past the limits", m.W, m.H, len(m.Pix))
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 64<<20+uint64(4*len(data)) {
			t.Fatalf("decoding %d bytes allocated %d", len(data), a)
		}
	})
}

// FuzzContainers exercises the hand-written parsers: EXIF in every
// container, the HEIF size walk and the GIF frame count.
func FuzzContainers(f *testing.F) {
	seedImages(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fm := range []sniff.Format{sniff.JPEG, sniff.PNG, sniff.WebP, sniff.TIFF} {
			if o := orientation(data, fm); o < 1 || o > 8 {
				t.Fatalf("orientation %d", o)
			}
		}
		if w, h, err := heifSize(data); err == nil && (w <= 0 || h <= 0) {
			t.Fatalf("heif size %dx%d without error", w, h)
		}
		if n := gifFrames(data); n < 0 || n > 100000 {
			t.Fatalf("gif frames %d", n)
		}
	})
}
