package jpeg

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// scene is a test picture with gradients, texture, saturated corners, sharp
// edges and noise, so blocks use many coefficients and samples clamp.
func scene(w, h int, seed uint32) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	s := seed*2654435761 + 1
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			s ^= s << 13
			s ^= s >> 17
			s ^= s << 5
			noise := float64(s%41) - 20
			tex := 40 * math.Sin(float64(x)*0.7) * math.Cos(float64(y)*0.45)
			c := color.NRGBA{
				R: clampF(float64(x*255/max(w-1, 1)) + tex + noise),
				G: clampF(float64(y*255/max(h-1, 1)) - tex + noise),
				B: clampF(128 + 127*math.Sin(float64(x+y)/9) + noise),
				A: 255,
			}
			if (x/7+y/5)%4 == 0 {
				c.R, c.G = 255-c.R, 0
			}
			m.SetNRGBA(x, y, c)
		}
	}
	return m
}

// clampF rounds down and clamps to a byte.
func clampF(v float64) uint8 { return uint8(math.Max(0, math.Min(255, v))) }

// jpegCase is one test file and whether our decoder (not image/jpeg) takes it.
type jpegCase struct {
	name     string
	data     []byte
	baseline bool
}

// jpegCases encodes scenes with image/jpeg (some re-coded with restart
// markers) and, when installed, ImageMagick
// (every sampling layout, gray, qualities, progressive, CMYK) and ffmpeg
// (slices, which write restart markers).
func jpegCases(t *testing.T) []jpegCase {
	t.Helper()
	dir := t.TempDir()
	var cases []jpegCase
	sizes := [][2]int{{37, 23}, {1, 1}, {2, 2}, {3, 3}, {5, 4}, {8, 8}, {17, 9}, {16, 16}, {33, 65}, {101, 67}, {640, 480}}
	for i, sz := range sizes {
		m := scene(sz[0], sz[1], uint32(i))
		for _, q := range []int{10, 75, 100} {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: q}); err != nil {
				t.Fatal(err)
			}
			cases = append(cases, jpegCase{fmt.Sprintf("go %dx%d q%d", sz[0], sz[1], q), buf.Bytes(), true})
		}
		g := image.NewGray(m.Rect)
		for j := range g.Pix {
			g.Pix[j] = m.Pix[4*j+1]
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, g, &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, jpegCase{fmt.Sprintf("go gray %dx%d", sz[0], sz[1]), buf.Bytes(), true})
		if sz[0]*sz[1] > 200 {
			for _, n := range []int{1, 5} {
				cases = append(cases, jpegCase{fmt.Sprintf("go %dx%d restart %d", sz[0], sz[1], n), withRestarts(t, cases[len(cases)-2].data, n), true})
			}
		}
	}
	type tool struct {
		name, cmd string
		args      func(src, dst string) []string
		baseline  bool
	}
	var tools []tool
	for _, sf := range []string{"1x1", "2x1", "2x2", "1x2", "4x1", "4x2"} {
		for _, q := range []string{"50", "95", "100"} {
			tools = append(tools, tool{"magick " + sf + " q" + q, "convert", func(src, dst string) []string {
				return []string{src, "-sampling-factor", sf, "-quality", q, dst}
			}, true})
		}
	}
	tools = append(tools,
		tool{"magick gray", "convert", func(src, dst string) []string { return []string{src, "-colorspace", "Gray", dst} }, true},
		tool{"magick progressive", "convert", func(src, dst string) []string { return []string{src, "-interlace", "JPEG", dst} }, false},
		tool{"magick cmyk", "convert", func(src, dst string) []string { return []string{src, "-colorspace", "CMYK", dst} }, false})
	for _, pf := range []string{"yuvj420p", "yuvj422p", "yuvj444p"} {
		tools = append(tools, tool{"ffmpeg slices " + pf, "ffmpeg", func(src, dst string) []string {
			return []string{"-v", "error", "-y", "-i", src, "-frames:v", "1", "-pix_fmt", pf, "-q:v", "3", "-slices", "3", "-threads", "3", dst}
		}, true})
	}
	missing := map[string]bool{}
	for i, sz := range [][2]int{{37, 23}, {5, 4}, {101, 67}, {250, 161}} {
		src := filepath.Join(dir, fmt.Sprintf("s%d.png", i))
		if err := os.WriteFile(src, encodePNG(t, scene(sz[0], sz[1], uint32(40+i))), 0o600); err != nil {
			t.Fatal(err)
		}
		for j, tl := range tools {
			if _, err := exec.LookPath(tl.cmd); err != nil {
				missing[tl.cmd] = true
				continue
			}
			dst := filepath.Join(dir, fmt.Sprintf("s%d-%d.jpg", i, j))
			if out, err := exec.Command(tl.cmd, tl.args(src, dst)...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v: %s", tl.name, err, out)
			}
			data, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, jpegCase{fmt.Sprintf("%s %dx%d", tl.name, sz[0], sz[1]), data, tl.baseline})
		}
	}
	for _, c := range cases {
		if c.name == "magick 1x1 q95 101x67" {
			cases = append(cases, jpegCase{"RGB ids (no JFIF)", asRGB(t, c.data, false), true},
				jpegCase{"Adobe transform 0", asRGB(t, c.data, true), true})
			break
		}
	}
	for cmd := range missing {
		t.Logf("%s not installed: its JPEGs are not tested", cmd)
	}
	return cases
}

// pillowScript prints, for each file, its RGB size then Pillow's
// open(...).convert("RGB") bytes.
const pillowScript = `
import struct, sys
from PIL import Image
for p in sys.argv[1:]:
    b = Image.open(p).convert("RGB").tobytes()
    sys.stdout.buffer.write(struct.pack("<Q", len(b)) + b)
`

// pillowDecode decodes every file with Pillow in one process, or skips the
// test when Pillow is missing.
func pillowDecode(t *testing.T, files [][]byte) [][]byte {
	t.Helper()
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import PIL").Run() != nil {
		t.Skip("Pillow (python3-pil) not installed: skipping the comparison with Pillow's JPEG decoding")
	}
	dir := t.TempDir()
	args := []string{"-c", pillowScript}
	for i, f := range files {
		p := filepath.Join(dir, fmt.Sprintf("%d.jpg", i))
		if err := os.WriteFile(p, f, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, err := exec.Command(py, args...).Output()
	if err != nil {
		t.Fatalf("pillow: %v", err)
	}
	res := make([][]byte, len(files))
	for i := range res {
		n := binary.LittleEndian.Uint64(out)
		res[i], out = out[8:8+n], out[8+n:]
	}
	return res
}

// TestJPEGMatchesPillow: every baseline file decodes, through both the
// per-pixel conversion and the planar rows the resampler reads, to exactly
// Pillow's pixels; progressive and CMYK files are ErrNotBaseline (their
// decoding is media/picture's, through image/jpeg).
func TestJPEGMatchesPillow(t *testing.T) {
	var cases []jpegCase
	for _, c := range jpegCases(t) {
		_, err := Decode(context.Background(), c.data, noLimit)
		if ours := !errors.Is(err, ErrNotBaseline); ours != c.baseline || (ours && err != nil) {
			t.Errorf("%s: our decoder: %v (want baseline=%v)", c.name, err, c.baseline)
			continue
		}
		if c.baseline {
			cases = append(cases, c)
		}
	}
	files := make([][]byte, len(cases))
	for i, c := range cases {
		files[i] = c.data
	}
	want := pillowDecode(t, files)
	exact := 0
	for i, c := range cases {
		m, err := Decode(context.Background(), c.data, noLimit)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := toRGB(t, m, true)
		if len(want[i]) != len(got) {
			t.Errorf("%s: Pillow gives %d bytes, we %d", c.name, len(want[i]), len(got))
			continue
		}
		if d, mean := maxDiff(got, want[i]); d != 0 {
			t.Errorf("%s: max |diff| %d from Pillow, mean %.4f", c.name, d, mean)
			continue
		}
		if rows := toRGB(t, m, false); !bytes.Equal(rows, want[i]) {
			t.Errorf("%s: the resampler's rows differ from Pillow", c.name)
			continue
		}
		exact++
	}
	t.Logf("%d of %d baseline files identical to Pillow", exact, len(cases))
}

// asRGB relabels a 4:4:4 JFIF file as RGB-coded: without the JFIF segment,
// with component ids 'R', 'G', 'B' or (adobe) an Adobe segment saying
// "no transform". Pillow's libjpeg then outputs the samples unconverted.
func asRGB(t *testing.T, data []byte, adobe bool) []byte {
	t.Helper()
	out := append([]byte{}, data[:2]...)
	if adobe {
		out = append(out, 0xff, 0xee, 0, 14, 'A', 'd', 'o', 'b', 'e', 0, 100, 0, 0, 0, 0, 0)
	}
	for p := 2; p+4 <= len(data); {
		m, n := data[p+1], int(binary.BigEndian.Uint16(data[p+2:]))
		seg := append([]byte{}, data[p:p+2+n]...)
		switch m {
		case 0xe0:
			seg = nil
		case 0xc0:
			if !adobe {
				seg[10], seg[13], seg[16] = 'R', 'G', 'B'
			}
		case 0xda:
			if !adobe {
				seg[5], seg[7], seg[9] = 'R', 'G', 'B'
			}
			return append(append(out, seg...), data[p+2+n:]...)
		}
		out = append(out, seg...)
		p += 2 + n
	}
	t.Fatal("no SOS")
	return nil
}
