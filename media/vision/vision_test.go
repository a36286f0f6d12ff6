package vision

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"perch/media/npy"
	"perch/media/picture"
)

var gemma = Params{MaxSoftTokens: 280, PatchSize: 16, PoolingKernel: 3}

func TestTargetSizeTable(t *testing.T) {
	raw, err := os.ReadFile("testdata/preprocess/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []struct {
			Height, Width int
			MaxSoftTokens int    `json:"max_soft_tokens"`
			TargetHeight  int    `json:"target_height"`
			TargetWidth   int    `json:"target_width"`
			Branch        string `json:"branch"`
			SoftTokens    int    `json:"soft_tokens"`
		} `json:"target_size_rule_table"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rows) != 100 {
		t.Fatalf("want 100 rows, got %d", len(doc.Rows))
	}
	for _, r := range doc.Rows {
		p := gemma
		p.MaxSoftTokens = r.MaxSoftTokens
		got, err := TargetSize(r.Width, r.Height, p)
		if err != nil {
			t.Fatal(err)
		}
		want := Target{W: r.TargetWidth, H: r.TargetHeight, SoftTokens: r.SoftTokens, Branch: r.Branch}
		if got != want {
			t.Errorf("%dx%d @%d: got %+v, want %+v", r.Width, r.Height, r.MaxSoftTokens, got, want)
		}
	}
}

func TestRescaleBitExact(t *testing.T) {
	raw, err := os.ReadFile("testdata/preprocess/rescale.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hex []uint32 `json:"mlx_vlm_float32_hex"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Hex) != 256 {
		t.Fatalf("%v, %d values", err, len(doc.Hex))
	}
	for v, want := range doc.Hex {
		if got := math.Float32bits(Rescale(uint8(v))); got != want {
			t.Errorf("%d: %08x, want %08x", v, got, want)
		}
	}
}

func loadPNG(t *testing.T, path string) *picture.RGB {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := picture.Decode(context.Background(), b, picture.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func loadNpy(t *testing.T, path string) *npy.Array {
	t.Helper()
	a, err := npy.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func equalF32(t *testing.T, name string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %v, want %v (bit-exact)", name, i, got[i], want[i])
		}
	}
}

func equalI32(t *testing.T, name string, got, want []int32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s[%d] = %d, want %d", name, i, got[i], want[i])
		}
	}
}

// vision-tiny (budget 6): 144x96 needs no resize; 54 SigLIP patches.
func TestSigLIPPatchesMatchGolden(t *testing.T) {
	img := loadPNG(t, "testdata/vision-tiny/image.png")
	p := Params{MaxSoftTokens: 6, PatchSize: 16, PoolingKernel: 3, Tower: SigLIP}
	in, err := Prepare(img, p)
	if err != nil {
		t.Fatal(err)
	}
	if in.Target.SoftTokens != 6 || in.Patches.Real != 54 || in.Patches.N != 54 || in.Resized != img {
		t.Fatalf("target %+v, patches %d/%d", in.Target, in.Patches.Real, in.Patches.N)
	}
	equalF32(t, "patches", in.Patches.Data, loadNpy(t, "testdata/vision-tiny/patches.npy").F32)
	equalI32(t, "positions", in.Patches.Pos, loadNpy(t, "testdata/vision-tiny/patch_positions.npy").I32)

	// The HF layout pads to 72 rows (budget 8): zero vectors at (-1, -1).
	padded, err := Patchify(img, 16, 72)
	if err != nil {
		t.Fatal(err)
	}
	equalI32(t, "padded positions", padded.Pos, loadNpy(t, "testdata/vision-tiny/patch_positions_padded.npy").I32)
	for _, v := range padded.Data[54*768:] {
		if v != 0 {
			t.Fatal("padding rows must be zero")
		}
	}
}

func TestUnifiedPatchesMatchGolden(t *testing.T) {
	img := loadPNG(t, "testdata/vision-unified-tiny/image.png")
	in, err := Prepare(img, Params{MaxSoftTokens: 6, PatchSize: 16, PoolingKernel: 3, Tower: Unified})
	if err != nil {
		t.Fatal(err)
	}
	if in.Patches.Dim != 6912 || in.Patches.N != 6 || in.Patches.Cols != 3 || in.Patches.Rows != 2 {
		t.Fatalf("patches %+v", in.Patches)
	}
	equalF32(t, "pixel_values", in.Patches.Data, loadNpy(t, "testdata/vision-unified-tiny/pixel_values.npy").F32)
	equalI32(t, "image_position_ids", in.Patches.Pos, loadNpy(t, "testdata/vision-unified-tiny/image_position_ids.npy").I32)
}

// With the real budget (280) the same image is upscaled to 960x624 exactly as
// Pillow does (preprocess case E), padded to 2520 SigLIP rows.
func TestPrepareRealBudget(t *testing.T) {
	img := loadPNG(t, "testdata/vision-tiny/image.png")
	in, err := Prepare(img, gemma)
	if err != nil {
		t.Fatal(err)
	}
	want := loadPNG(t, filepath.Join("..", "resample", "testdata", "preprocess", "E_144x96_vision_tiny_image.expected_960x624.png"))
	if in.Resized.W != 960 || in.Resized.H != 624 || string(in.Resized.Pix) != string(want.Pix) {
		t.Fatalf("resized %dx%d differs from Pillow's", in.Resized.W, in.Resized.H)
	}
	pt := in.Patches
	if in.Target.SoftTokens != 260 || pt.Real != 60*39 || pt.N != 2520 || pt.Pos[2*pt.Real] != -1 {
		t.Fatalf("tokens %d, real %d, rows %d", in.Target.SoftTokens, pt.Real, pt.N)
	}
	// Spot-check one value: patch (x=2, y=1), pixel (dy=3, dx=4), channel 1.
	n := 1*pt.Cols + 2
	px := in.Resized.At(2*16+4, 1*16+3)
	if got := pt.Data[n*768+(3*16+4)*3+1]; got != Rescale(px[1]) {
		t.Fatalf("layout: %v vs %v", got, Rescale(px[1]))
	}
	u, err := Prepare(img, Params{MaxSoftTokens: 280, PatchSize: 16, PoolingKernel: 3, Tower: Unified})
	if err != nil || u.Patches.N != 280 || u.Patches.Real != 260 || u.Patches.Dim != 6912 {
		t.Fatalf("unified: %v %+v", err, u.Patches)
	}
}

func TestErrors(t *testing.T) {
	if _, err := TargetSize(0, 10, gemma); err == nil {
		t.Error("zero width accepted")
	}
	if _, err := TargetSize(10, 10, Params{}); err == nil {
		t.Error("zero params accepted")
	}
	if _, err := Patchify(&picture.RGB{W: 17, H: 16, Pix: make([]uint8, 17*16*3)}, 16, 0); err == nil {
		t.Error("ragged patchify accepted")
	}
}
