package vision

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"perch/media/internal/sidebyside"
	"perch/media/picture"
)

// photo12MP is a 4032x3024 q90 JPEG with smooth gradients, edges and texture.
func photo12MP(b *testing.B) []byte { return photo(b, 0) }

// photo12MPNoisy adds ±noise/2 of sensor-like noise per sample: many more
// coefficients per block and a file about twice as large.
func photo12MPNoisy(b *testing.B) []byte { return photo(b, 24) }

// photo encodes the benchmark scene with the given noise amplitude.
func photo(b *testing.B, noise int) []byte {
	const w, h = 4032, 3024
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	s := uint32(1)
	rnd := func() int {
		if noise == 0 {
			return 0
		}
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		return int(s%uint32(noise+1)) - noise/2
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := m.PixOffset(x, y)
			tex := 20 * math.Sin(float64(x)*0.21) * math.Cos(float64(y)*0.17)
			m.Pix[i] = clamp8(int(float64(x*200/w)+30+tex) + rnd())
			m.Pix[i+1] = clamp8(int(float64(y*200/h)+30-tex) + rnd())
			m.Pix[i+2] = clamp8(int(128+100*math.Sin(float64(x+y)/300)) + rnd())
			m.Pix[i+3] = 255
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// clamp8 clamps to a byte.
func clamp8(v int) uint8 { return uint8(min(max(v, 0), 255)) }

func prepare12MP(b *testing.B, data []byte) *Input {
	in, _, err := PrepareBytes(context.Background(), data, picture.DefaultLimits, gemma)
	if err != nil {
		b.Fatal(err)
	}
	return in
}

func BenchmarkPrepare12MPJPEG(b *testing.B) {
	data := photo12MP(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		prepare12MP(b, data)
	}
}

// BenchmarkImageVsPillow: decode + resize + patchify of a 12 MP JPEG in Go,
// against Pillow's decode + BICUBIC resize of the same file, in one run.
func BenchmarkImageVsPillow(b *testing.B) {
	imageVsPillow(b, photo12MP(b), "12 MP JPEG -> 912x672 patches")
}

// BenchmarkNoisyImageVsPillow is BenchmarkImageVsPillow on the noisy photo.
func BenchmarkNoisyImageVsPillow(b *testing.B) {
	imageVsPillow(b, photo12MPNoisy(b), "noisy 12 MP JPEG -> 912x672 patches")
}

// imageVsPillow times PrepareBytes on data against Pillow on the same file.
func imageVsPillow(b *testing.B, data []byte, name string) {
	py, err := sidebyside.Python("PIL")
	if err != nil {
		b.Skipf("no side-by-side: %v", err)
	}
	path := filepath.Join(b.TempDir(), "photo.jpg")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	var in *Input
	run := func() { in = prepare12MP(b, data) }
	runs := max(b.N, 3)
	goT := sidebyside.Median(runs, run)
	prev := runtime.GOMAXPROCS(1)
	go1T := sidebyside.Median(runs, run)
	runtime.GOMAXPROCS(prev)
	t := in.Target
	ref, err := sidebyside.RunMS(py, "testdata/pillow_bench.py", path, strconv.Itoa(t.W), strconv.Itoa(t.H), strconv.Itoa(runs))
	if err != nil {
		b.Fatal(err)
	}
	sidebyside.Report(b, name, goT, go1T, ref, "pillow")
}

// BenchmarkDecodeVsPillow: decoding the 12 MP JPEG to RGB alone, against
// Pillow's open + convert("RGB").
func BenchmarkDecodeVsPillow(b *testing.B) {
	py, err := sidebyside.Python("PIL")
	if err != nil {
		b.Skipf("no side-by-side: %v", err)
	}
	data := photo12MP(b)
	path := filepath.Join(b.TempDir(), "photo.jpg")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	run := func() {
		if _, _, err := picture.Decode(context.Background(), data, picture.DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
	runs := max(b.N, 5)
	goT := sidebyside.Median(runs, run)
	prev := runtime.GOMAXPROCS(1)
	go1T := sidebyside.Median(runs, run)
	runtime.GOMAXPROCS(prev)
	ref, err := sidebyside.RunMS(py, "testdata/pillow_bench.py", path, "0", "0", strconv.Itoa(runs), "decode")
	if err != nil {
		b.Fatal(err)
	}
	sidebyside.Report(b, "decode of a 12 MP JPEG to RGB", goT, go1T, ref, "pillow")
}

// BenchmarkResizeVsPillow: resize + patchify of an already decoded 12 MP
// image in Go, against Pillow's BICUBIC resize of the decoded image.
func BenchmarkResizeVsPillow(b *testing.B) {
	py, err := sidebyside.Python("PIL")
	if err != nil {
		b.Skipf("no side-by-side: %v", err)
	}
	data := photo12MP(b)
	path := filepath.Join(b.TempDir(), "photo.jpg")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	img, _, err := picture.Decode(context.Background(), data, picture.DefaultLimits)
	if err != nil {
		b.Fatal(err)
	}
	var in *Input
	run := func() {
		if in, err = Prepare(img, gemma); err != nil {
			b.Fatal(err)
		}
	}
	runs := max(b.N, 5)
	goT := sidebyside.Median(runs, run)
	prev := runtime.GOMAXPROCS(1)
	go1T := sidebyside.Median(runs, run)
	runtime.GOMAXPROCS(prev)
	t := in.Target
	ref, err := sidebyside.RunMS(py, "testdata/pillow_bench.py", path, strconv.Itoa(t.W), strconv.Itoa(t.H), strconv.Itoa(runs), "resize")
	if err != nil {
		b.Fatal(err)
	}
	sidebyside.Report(b, "resize+patchify of decoded 12 MP", goT, go1T, ref, "pillow")
}
