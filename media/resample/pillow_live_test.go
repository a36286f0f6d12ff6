package resample

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const pillowResize = `
import sys
from PIL import Image
src, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.stdout.buffer.write(Image.open(src).convert("RGB").resize((w, h), Image.BICUBIC).tobytes())
`

// Random images and sizes (down, up, mixed, extreme aspect) against the
// Pillow installed here, when there is one: every byte must match.
func TestRandomSizesMatchLivePillow(t *testing.T) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import PIL").Run() != nil {
		t.Skip("Pillow (python3-pil) not installed: skipping the live cross-check")
	}
	rng := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	for n := 0; n < 12; n++ {
		w, h := 1+rng.Intn(300), 1+rng.Intn(300)
		dw, dh := 1+rng.Intn(400), 1+rng.Intn(400)
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		for i := range img.Pix {
			img.Pix[i] = uint8(rng.Intn(256))
			if i%4 == 3 {
				img.Pix[i] = 255
			}
		}
		var buf bytes.Buffer
		png.Encode(&buf, img)
		p := filepath.Join(dir, fmt.Sprintf("r%d.png", n))
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		want, err := exec.Command(py, "-c", pillowResize, p, fmt.Sprint(dw), fmt.Sprint(dh)).Output()
		if err != nil {
			t.Fatal(err)
		}
		src := make([]uint8, 0, 3*w*h)
		for i := 0; i < len(img.Pix); i += 4 {
			src = append(src, img.Pix[i:i+3]...)
		}
		got, err := BicubicRGB(src, w, h, dw, dh)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%dx%d -> %dx%d differs from Pillow", w, h, dw, dh)
		}
	}
}
