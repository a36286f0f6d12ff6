package jpeg

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/jpeg"
	"math/rand"
	"runtime"
	"strings"
	"testing"
)

// goJPEG encodes a scene with image/jpeg (4:2:0, or one component for gray).
func goJPEG(t testing.TB, w, h, q int, gray bool) []byte {
	t.Helper()
	var m image.Image = scene(w, h, uint32(w*h))
	if gray {
		g := image.NewGray(m.Bounds())
		for i := range g.Pix {
			g.Pix[i] = m.(*image.NRGBA).Pix[4*i]
		}
		m = g
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeOurs decodes and converts to RGB as media/picture does.
func decodeOurs(t testing.TB, data []byte) ([]byte, error) {
	m, err := Decode(context.Background(), data, noLimit)
	if err != nil {
		return nil, err
	}
	return toRGB(t, m, false), nil
}

// Restart markers change the coding, never the pixels.
func TestJPEGRestartIntervals(t *testing.T) {
	for _, c := range []struct {
		w, h int
		gray bool
	}{{37, 23, false}, {101, 67, false}, {64, 64, true}, {9, 300, false}} {
		plain := goJPEG(t, c.w, c.h, 85, c.gray)
		want, err := decodeOurs(t, plain)
		if err != nil {
			t.Fatal(err)
		}
		for _, interval := range []int{1, 2, 3, 7, 8, 9, 1000} {
			data := withRestarts(t, plain, interval)
			if !bytes.Contains(data, []byte{0xff, 0xdd}) {
				t.Fatal("no DRI segment")
			}
			got, err := decodeOurs(t, data)
			if err != nil {
				t.Fatalf("%dx%d every %d MCUs: %v", c.w, c.h, interval, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%dx%d every %d MCUs: pixels differ", c.w, c.h, interval)
			}
		}
	}
}

// A wrong or missing RSTn is an error, not a silent misdecode.
func TestJPEGBadRestartMarker(t *testing.T) {
	data := withRestarts(t, goJPEG(t, 64, 32, 80, false), 2)
	i := bytes.Index(data, []byte{0xff, 0xd1})
	if i < 0 {
		t.Fatal("no RST1")
	}
	bad := append([]byte{}, data...)
	bad[i+1] = 0xd5
	if _, err := decodeOurs(t, bad); err == nil || !strings.Contains(err.Error(), "restart") {
		t.Fatalf("RST5 in place of RST1: %v", err)
	}
}

// Every cut inside the file gives an error; only a missing EOI is forgiven.
func TestJPEGTruncated(t *testing.T) {
	for _, data := range [][]byte{goJPEG(t, 40, 30, 75, false), goJPEG(t, 33, 17, 95, true), withRestarts(t, goJPEG(t, 48, 40, 90, false), 3)} {
		for cut := 0; cut < len(data)-2; cut++ {
			if _, err := Decode(context.Background(), data[:cut], noLimit); err == nil {
				t.Fatalf("cut at %d of %d: no error", cut, len(data))
			}
		}
		if _, err := decodeOurs(t, data[:len(data)-2]); err != nil {
			t.Errorf("without EOI: %v", err)
		}
	}
}

// Corrupt bytes anywhere give an error or some image, never a panic.
func TestJPEGCorruptBytes(t *testing.T) {
	data := withRestarts(t, goJPEG(t, 45, 31, 90, false), 4)
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 3000; i++ {
		bad := append([]byte{}, data...)
		for n := 1 + rng.Intn(3); n > 0; n-- {
			bad[rng.Intn(len(bad))] = byte(rng.Intn(256))
		}
		m, err := Decode(context.Background(), bad, noLimit)
		if err != nil {
			continue
		}
		if b := m.Bounds(); len(toRGB(t, m, false)) != 3*b.Dx()*b.Dy() {
			t.Fatalf("corrupt file %d: %v with wrong-sized rows", i, b)
		}
	}
}

// Tables that libjpeg refuses are errors; what we leave to image/jpeg goes there.
func TestJPEGHeaderCases(t *testing.T) {
	data := goJPEG(t, 16, 16, 80, false)
	dht := bytes.Index(data, []byte{0xff, 0xc4})
	bad := append([]byte{}, data...)
	bad[dht+5] = 3 // three 1-bit codes
	if _, err := decodeOurs(t, bad); err == nil || !strings.Contains(err.Error(), "Huffman") {
		t.Errorf("over-subscribed Huffman table: %v", err)
	}
	prog := append([]byte{}, data...)
	prog[bytes.Index(prog, []byte{0xff, 0xc0})+1] = 0xc2
	if _, err := decodeOurs(t, prog); !errors.Is(err, ErrNotBaseline) {
		t.Errorf("SOF2: %v, want the image/jpeg fallback", err)
	}
	sof := append([]byte{}, data...)
	i := bytes.Index(sof, []byte{0xff, 0xc0})
	copy(sof[i+5:], []byte{0xff, 0xff, 0xff, 0xff}) // 65535 x 65535
	if _, err := Decode(context.Background(), sof, noLimit); !errors.Is(err, errTooLarge) {
		t.Errorf("65535x65535 frame: %v", err)
	}
	if _, err := decodeOurs(t, []byte{0xff, 0xd8, 0xff, 0xd9}); err == nil {
		t.Error("SOI EOI decoded")
	}
}

// The parallel IDCT gives the sequential result, and a cancelled context stops.
func TestJPEGParallelAndCancel(t *testing.T) {
	data := withRestarts(t, goJPEG(t, 640, 480, 90, false), 5)
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	want, err := decodeOurs(t, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		got, err := decodeOurs(t, data)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("GOMAXPROCS %d: %v, pixels equal %v", procs, err, err == nil && bytes.Equal(got, want))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Decode(ctx, data, noLimit); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// FuzzJPEG: any bytes either decode to the header's size, with rows the
// resampler can read, or give an error; never a panic or an outsized
// allocation.
func FuzzJPEG(f *testing.F) {
	seeds := [][]byte{goJPEG(f, 9, 7, 75, false), goJPEG(f, 5, 5, 90, true), goJPEG(f, 17, 33, 100, false)}
	seeds = append(seeds, withRestarts(f, seeds[0], 1), withRestarts(f, seeds[2], 3))
	for _, s := range seeds {
		f.Add(s)
		f.Add(s[:len(s)*2/3])
		corrupt := append([]byte{}, s...)
		corrupt[len(s)*3/4] ^= 0x5a
		f.Add(corrupt)
	}
	const maxPixels = 1 << 20
	lim := limit(2048, maxPixels)
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := Decode(context.Background(), data, lim)
		runtime.ReadMemStats(&after)
		if err != nil {
			return
		}
		b := m.Bounds()
		if b.Dx()*b.Dy() > maxPixels {
			t.Fatalf("decoded %v past the limits", b)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 16<<20+uint64(4*len(data)) {
			t.Fatalf("decoding %d bytes allocated %d", len(data), a)
		}
		if n := len(toRGB(t, m, false)); n != 3*b.Dx()*b.Dy() {
			t.Fatalf("%v converted to %d bytes", b, n)
		}
	})
}
