package resample

import (
	"encoding/json"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func readRGB(t testing.TB, path string) ([]uint8, int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Bounds()
	rgba := image.NewNRGBA(b)
	draw.Draw(rgba, b, m, b.Min, draw.Src)
	out := make([]uint8, 0, 3*b.Dx()*b.Dy())
	for i := 0; i < len(rgba.Pix); i += 4 {
		out = append(out, rgba.Pix[i], rgba.Pix[i+1], rgba.Pix[i+2])
	}
	return out, b.Dx(), b.Dy()
}

type pilCase struct {
	Name         string `json:"name"`
	InputPNG     string `json:"input_png"`
	ExpectedPNG  string `json:"expected_png"`
	TargetWidth  int    `json:"target_width"`
	TargetHeight int    `json:"target_height"`
}

// TestMatchesPillow: every fixture case must equal Pillow 9.4's BICUBIC resize
// byte for byte (tolerance 0).
func TestMatchesPillow(t *testing.T) {
	raw, err := os.ReadFile("testdata/preprocess/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []pilCase }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) != 5 {
		t.Fatalf("want 5 cases, got %d", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		src, w, h := readRGB(t, filepath.Join("testdata/preprocess", c.InputPNG))
		want, ew, eh := readRGB(t, filepath.Join("testdata/preprocess", c.ExpectedPNG))
		if ew != c.TargetWidth || eh != c.TargetHeight {
			t.Fatalf("%s: expected png is %dx%d", c.Name, ew, eh)
		}
		got, err := BicubicRGB(src, w, h, ew, eh)
		if err != nil {
			t.Fatal(err)
		}
		diff, maxd := 0, 0
		for i := range want {
			d := int(got[i]) - int(want[i])
			if d < 0 {
				d = -d
			}
			if d != 0 {
				diff++
			}
			maxd = max(maxd, d)
		}
		t.Logf("%s %dx%d -> %dx%d: %d of %d bytes differ, max |diff| %d", c.Name, w, h, ew, eh, diff, len(want), maxd)
		if diff != 0 {
			t.Errorf("%s: not bit-exact with Pillow", c.Name)
		}
	}
}

func TestIdentityAndErrors(t *testing.T) {
	src := []uint8{1, 2, 3, 4, 5, 6}
	got, err := BicubicRGB(src, 2, 1, 2, 1)
	if err != nil || string(got) != string(src) {
		t.Fatalf("identity: %v %v", got, err)
	}
	for _, c := range [][4]int{{0, 1, 1, 1}, {2, 1, 0, 1}, {2, 2, 1, 1}, {-1, 1, 1, 1}} {
		if _, err := BicubicRGB(src, c[0], c[1], c[2], c[3]); err == nil {
			t.Errorf("%v: want error", c)
		}
	}
}

// A flat image stays flat through any resize (the weights sum to 1 in fixed point).
func TestFlatStaysFlat(t *testing.T) {
	for _, sz := range [][4]int{{7, 5, 100, 3}, {300, 200, 17, 11}, {5, 300, 5, 7}, {301, 7, 48, 7}} {
		src := make([]uint8, 3*sz[0]*sz[1])
		for i := range src {
			src[i] = []uint8{9, 200, 255}[i%3]
		}
		got, err := BicubicRGB(src, sz[0], sz[1], sz[2], sz[3])
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != []uint8{9, 200, 255}[i%3] {
				t.Fatalf("%v: byte %d is %d", sz, i, v)
			}
		}
	}
}
