package picture

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

func decodeFile(t *testing.T, path string) (*RGB, Info) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, info, err := Decode(context.Background(), b, DefaultLimits)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m, info
}

func encodePNG(t testing.TB, m image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decodeBytes(t *testing.T, b []byte) (*RGB, Info) {
	t.Helper()
	m, info, err := Decode(context.Background(), b, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return m, info
}

func near(a, b [3]uint8, tol int) bool {
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d < -tol || d > tol {
			return false
		}
	}
	return true
}

// maxDiff compares two RGB images and returns the largest channel difference.
func maxDiff(t *testing.T, a, b *RGB) (int, float64) {
	t.Helper()
	if a.W != b.W || a.H != b.H {
		t.Fatalf("sizes differ: %dx%d vs %dx%d", a.W, a.H, b.W, b.H)
	}
	m, sum := 0, 0
	for i := range a.Pix {
		d := int(a.Pix[i]) - int(b.Pix[i])
		if d < 0 {
			d = -d
		}
		m = max(m, d)
		sum += d
	}
	return m, float64(sum) / float64(len(a.Pix))
}

// quadrants: top-left red, top-right green, bottom-left blue, bottom-right white.
func quadrants(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.NRGBA{255, 255, 255, 255}
			switch {
			case x < w/2 && y < h/2:
				c = color.NRGBA{255, 0, 0, 255}
			case y < h/2:
				c = color.NRGBA{0, 255, 0, 255}
			case x < w/2:
				c = color.NRGBA{0, 0, 255, 255}
			}
			m.Set(x, y, c)
		}
	}
	return m
}

// withOrientation inserts an APP1 Exif segment holding orientation o after SOI.
func withOrientation(jpg []byte, o uint16) []byte {
	tiffHdr := []byte("MM\x00*\x00\x00\x00\x08")
	ifd := binary.BigEndian.AppendUint16(nil, 1)
	ifd = append(ifd, 0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1)
	ifd = binary.BigEndian.AppendUint16(ifd, o)
	ifd = append(ifd, 0, 0, 0, 0, 0, 0)
	payload := append(append([]byte("Exif\x00\x00"), tiffHdr...), ifd...)
	seg := append([]byte{0xff, 0xe1}, binary.BigEndian.AppendUint16(nil, uint16(len(payload)+2))...)
	seg = append(seg, payload...)
	return append(append(append([]byte{}, jpg[:2]...), seg...), jpg[2:]...)
}

func TestJPEGWithExifOrientation6(t *testing.T) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, quadrants(64, 32), &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	m, info := decodeBytes(t, withOrientation(buf.Bytes(), 6))
	if info.Orientation != 6 || info.Width != 64 || info.Height != 32 {
		t.Fatalf("info %+v", info)
	}
	// Rotated 90° clockwise: 32 wide, 64 tall; red (stored top-left) is now top-right.
	if m.W != 32 || m.H != 64 {
		t.Fatalf("size %dx%d, want 32x64", m.W, m.H)
	}
	checks := []struct {
		x, y int
		want [3]uint8
	}{{24, 8, [3]uint8{255, 0, 0}}, {24, 56, [3]uint8{0, 255, 0}}, {8, 8, [3]uint8{0, 0, 255}}, {8, 56, [3]uint8{255, 255, 255}}}
	for _, c := range checks {
		if got := m.At(c.x, c.y); !near(got, c.want, 12) {
			t.Errorf("(%d,%d) = %v, want about %v", c.x, c.y, got, c.want)
		}
	}
}

func TestAllOrientations(t *testing.T) {
	src := &RGB{W: 3, H: 2, Pix: []uint8{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6}}
	// Stored:  1 2 3 / 4 5 6. Expected rows after each transpose, as Pillow's exif_transpose gives.
	want := map[int][]uint8{
		1: {1, 2, 3, 4, 5, 6}, 2: {3, 2, 1, 6, 5, 4}, 3: {6, 5, 4, 3, 2, 1}, 4: {4, 5, 6, 1, 2, 3},
		5: {1, 4, 2, 5, 3, 6}, 6: {4, 1, 5, 2, 6, 3}, 7: {6, 3, 5, 2, 4, 1}, 8: {3, 6, 2, 5, 1, 4},
	}
	for o, w := range want {
		m := Orient(src, o)
		got := make([]uint8, 0, 6)
		for i := 0; i < len(m.Pix); i += 3 {
			got = append(got, m.Pix[i])
		}
		if string(got) != string(w) {
			t.Errorf("orientation %d: got %v, want %v", o, got, w)
		}
	}
}

// Orient on an image larger than its tiles equals the per-pixel mapping.
func TestOrientLargeImage(t *testing.T) {
	w, h := 70, 45
	src := &RGB{W: w, H: h, Pix: make([]uint8, 3*w*h)}
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 7 / 3)
	}
	stored := func(o, x, y int) int {
		switch o {
		case 2:
			return y*w + (w - 1 - x)
		case 3:
			return (h-1-y)*w + (w - 1 - x)
		case 4:
			return (h-1-y)*w + x
		case 5:
			return x*w + y
		case 6:
			return (h-1-x)*w + y
		case 7:
			return (h-1-x)*w + (w - 1 - y)
		}
		return x*w + (w - 1 - y)
	}
	for o := 2; o <= 8; o++ {
		m := Orient(src, o)
		for y := 0; y < m.H; y++ {
			for x := 0; x < m.W; x++ {
				s := stored(o, x, y)
				if m.At(x, y) != src.At(s%w, s/w) {
					t.Fatalf("orientation %d: (%d,%d) wrong", o, x, y)
				}
			}
		}
	}
}

func TestSixteenBitGrayPNG(t *testing.T) {
	g := image.NewGray16(image.Rect(0, 0, 256, 4))
	for x := 0; x < 256; x++ {
		for y := 0; y < 4; y++ {
			g.SetGray16(x, y, color.Gray16{Y: uint16(x)<<8 | 0xab})
		}
	}
	m, _ := decodeBytes(t, encodePNG(t, g))
	for x := 0; x < 256; x++ {
		if got := m.At(x, 2); got != [3]uint8{uint8(x), uint8(x), uint8(x)} {
			t.Fatalf("x=%d: %v (a 16-bit gradient must stay a gradient, not clip to white)", x, got)
		}
	}
}

func TestRGBAPNGDropsAlphaLikePillow(t *testing.T) {
	m := image.NewNRGBA(image.Rect(0, 0, 4, 1))
	m.SetNRGBA(0, 0, color.NRGBA{10, 20, 30, 0})
	m.SetNRGBA(1, 0, color.NRGBA{200, 100, 50, 128})
	m.SetNRGBA(2, 0, color.NRGBA{1, 2, 3, 255})
	m.SetNRGBA(3, 0, color.NRGBA{255, 255, 255, 1})
	got, _ := decodeBytes(t, encodePNG(t, m))
	want := []uint8{10, 20, 30, 200, 100, 50, 1, 2, 3, 255, 255, 255}
	if string(got.Pix) != string(want) {
		t.Fatalf("got %v, want %v (Pillow's convert(\"RGB\") keeps stored colours)", got.Pix, want)
	}
}

func TestPalettedAndGrayPNG(t *testing.T) {
	pal := color.Palette{color.NRGBA{9, 8, 7, 0}, color.RGBA{100, 150, 200, 255}}
	p := image.NewPaletted(image.Rect(0, 0, 2, 1), pal)
	p.Pix = []uint8{0, 1}
	got, _ := decodeBytes(t, encodePNG(t, p))
	if string(got.Pix) != string([]uint8{9, 8, 7, 100, 150, 200}) {
		t.Fatalf("paletted: %v", got.Pix)
	}
	g := image.NewGray(image.Rect(0, 0, 2, 1))
	g.Pix = []uint8{0, 77}
	got, _ = decodeBytes(t, encodePNG(t, g))
	if string(got.Pix) != string([]uint8{0, 0, 0, 77, 77, 77}) {
		t.Fatalf("gray: %v", got.Pix)
	}
}

func TestAnimatedGIFFirstFrame(t *testing.T) {
	pal := color.Palette{color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}, color.RGBA{0, 255, 0, 255}}
	anim := &gif.GIF{}
	for i := 0; i < 3; i++ {
		f := image.NewPaletted(image.Rect(0, 0, 20, 10), pal)
		for j := range f.Pix {
			f.Pix[j] = uint8(i)
		}
		anim.Image = append(anim.Image, f)
		anim.Delay = append(anim.Delay, 10)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, anim); err != nil {
		t.Fatal(err)
	}
	m, info := decodeBytes(t, buf.Bytes())
	if info.Frames != 3 || m.W != 20 || m.H != 10 {
		t.Fatalf("info %+v, size %dx%d", info, m.W, m.H)
	}
	if m.At(5, 5) != [3]uint8{255, 0, 0} {
		t.Fatalf("first frame should be red, got %v", m.At(5, 5))
	}
}

func TestBMPAndTIFFRoundTrip(t *testing.T) {
	src := quadrants(10, 6)
	var b1, b2 bytes.Buffer
	if err := bmp.Encode(&b1, src); err != nil {
		t.Fatal(err)
	}
	if err := tiff.Encode(&b2, src, nil); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{b1.Bytes(), b2.Bytes()} {
		m, _ := decodeBytes(t, b)
		if m.At(1, 1) != [3]uint8{255, 0, 0} || m.At(8, 5) != [3]uint8{255, 255, 255} || m.At(8, 1) != [3]uint8{0, 255, 0} {
			t.Errorf("round trip lost colours: %v %v %v", m.At(1, 1), m.At(8, 5), m.At(8, 1))
		}
	}
}

// JPEG and WebP: our decode against Pillow's (libjpeg-turbo, libwebp), from
// files written by testdata/make_pil_goldens.py: identical (our JPEG decoder
// uses libjpeg's IDCT, upsampling and colour maths).
func TestCloseToPillow(t *testing.T) {
	for _, c := range []struct {
		file    string
		maxDiff int
		mean    float64
	}{{"photo420.jpg", 0, 0}, {"photo422.jpg", 0, 0}, {"photo444.jpg", 0, 0}, {"photo.webp", 0, 0}} {
		got, _ := decodeFile(t, filepath.Join("testdata", c.file))
		want, _ := decodeFile(t, filepath.Join("testdata", c.file+".pil.png"))
		m, mean := maxDiff(t, got, want)
		t.Logf("%s vs Pillow: max |diff| %d, mean %.3f", c.file, m, mean)
		if m > c.maxDiff || mean > c.mean {
			t.Errorf("%s: max %d (limit %d), mean %.3f (limit %.2f)", c.file, m, c.maxDiff, mean, c.mean)
		}
	}
}

func TestBombsRefusedFromHeader(t *testing.T) {
	// A PNG header claiming 100000 x 100000 pixels, with no pixel data.
	ihdr := binary.BigEndian.AppendUint32(nil, 100000)
	ihdr = binary.BigEndian.AppendUint32(ihdr, 100000)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	b := append([]byte("\x89PNG\r\n\x1a\n"), chunk("IHDR", ihdr)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := Decode(context.Background(), b, DefaultLimits)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("want ErrTooLarge, got %v", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 1<<20 {
		t.Fatalf("refusing a 100000x100000 header allocated %d bytes", a)
	}
	t.Logf("PNG bomb: %v", err)
	// A GIF whose logical screen is 65535 x 65535.
	g := []byte("GIF89a\xff\xff\xff\xff\x00\x00\x00;")
	if _, _, err := Decode(context.Background(), g, DefaultLimits); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("gif: want ErrTooLarge, got %v", err)
	}
	// A JPEG frame header (SOF0) of 65500 x 65500.
	j := []byte{0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, 0xff, 0xdc, 0xff, 0xdc, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xda, 0, 8}
	if _, _, err := Decode(context.Background(), j, DefaultLimits); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("jpeg: want ErrTooLarge, got %v", err)
	}
	// A limit below the image size applies too.
	small := encodePNG(t, image.NewGray(image.Rect(0, 0, 100, 100)))
	if _, _, err := Decode(context.Background(), small, Limits{MaxSide: 99, MaxPixels: 1 << 30}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("side limit: %v", err)
	}
}

func chunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

func TestTruncatedFilesGiveErrors(t *testing.T) {
	var j bytes.Buffer
	jpeg.Encode(&j, quadrants(40, 30), nil)
	files := map[string][]byte{"png": encodePNG(t, quadrants(40, 30)), "jpeg": j.Bytes()}
	for name, b := range files {
		cuts := []int{len(b) / 8, len(b) / 2, len(b) - 3}
		if name == "jpeg" { // every cut: our decoder first, image/jpeg where it declines
			cuts = cuts[:0]
			for cut := range len(b) - 2 {
				cuts = append(cuts, cut)
			}
		}
		for _, cut := range cuts {
			if _, _, err := Decode(context.Background(), b[:cut], DefaultLimits); err == nil {
				t.Errorf("%s cut at %d: no error", name, cut)
			}
		}
	}
	if _, _, err := Decode(context.Background(), []byte("not an image at all"), DefaultLimits); err == nil || !strings.Contains(err.Error(), "unsupported file type") {
		t.Errorf("garbage: %v", err)
	}
}

// HEIC and AVIF via the platform codec, from files libheif's heif-enc writes now.
func TestHEICAndAVIF(t *testing.T) {
	if _, err := exec.LookPath("heif-enc"); err != nil {
		t.Skip("heif-enc not installed (apt install libheif-examples): skipping HEIC/AVIF")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "q.png")
	if err := os.WriteFile(src, encodePNG(t, quadrants(128, 96)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ext, flag string }{{"heic", ""}, {"avif", "-A"}} {
		out := filepath.Join(dir, "q."+c.ext)
		args := []string{"-q", "90", "-o", out, src}
		if c.flag != "" {
			args = append([]string{c.flag}, args...)
		}
		if msg, err := exec.Command("heif-enc", args...).CombinedOutput(); err != nil {
			t.Logf("heif-enc %s failed (%v: %s); skipping %s", c.ext, err, msg, c.ext)
			continue
		}
		m, info := decodeFile(t, out)
		if info.Width != 128 || info.Height != 96 || m.W != 128 || m.H != 96 {
			t.Errorf("%s: info %+v, size %dx%d", c.ext, info, m.W, m.H)
			continue
		}
		if !near(m.At(20, 20), [3]uint8{255, 0, 0}, 24) || !near(m.At(100, 80), [3]uint8{255, 255, 255}, 24) {
			t.Errorf("%s: colours %v %v", c.ext, m.At(20, 20), m.At(100, 80))
		}
		t.Logf("%s: decoded %dx%d, red quadrant %v", c.ext, m.W, m.H, m.At(20, 20))
	}
}

// A source's rows (what the resampler reads: JPEG planes converted row by
// row, gray replicated) equal the RGB it materialises.
func TestSourceRowsEqualRGB(t *testing.T) {
	for _, file := range []string{"photo420.jpg", "photo422.jpg", "photo444.jpg", "photo.webp"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		src, _, err := DecodeSource(context.Background(), data, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		w, h := src.Size()
		r, g, b := make([]uint8, w), make([]uint8, w), make([]uint8, w)
		rows := make([]uint8, 0, 3*w*h)
		for y := 0; y < h; y++ {
			src.Row(y, r, g, b)
			for x := range r {
				rows = append(rows, r[x], g[x], b[x])
			}
		}
		if !bytes.Equal(rows, src.RGB().Pix) {
			t.Errorf("%s: rows differ from the materialised RGB", file)
		}
	}
}
