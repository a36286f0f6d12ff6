// Package vision turns a decoded RGB image into Gemma-4 vision inputs:
// the reference's target-size rule, Pillow-exact bicubic resize, the 1/255
// float32 rescale, and patchify for the SigLIP tower (16-px patches, padded
// to max_soft_tokens·k² rows) or the unified embedder (48-px patches, padded
// to max_soft_tokens rows), with (x, y) positions and (-1, -1) padding.
// Port of mlx-vlm's Gemma4ImageProcessor (aspect_ratio_preserving_resize,
// rescale, _patchify); research/gemma4.md §4.1.
package vision

import (
	"context"
	"errors"
	"fmt"
	"math"

	"perch/media/picture"
	"perch/media/resample"
)

// Tower selects the patch layout.
type Tower int

const (
	SigLIP  Tower = iota // gemma4_vision: PatchSize patches, pooled k×k in the tower
	Unified              // gemma4_unified_vision: (PatchSize·k) patches, one per soft token
)

// Params are the model's numbers (processor_config.json / vision_config).
type Params struct {
	MaxSoftTokens int // image budget: 70, 140, 280 (default), 560 or 1120; 70 per video frame
	PatchSize     int // 16
	PoolingKernel int // 3
	Tower         Tower
	// Unpadded keeps only the real patches (a tower that runs one image at
	// a time needs no padding rows); otherwise they are padded as above.
	Unpadded bool
}

// Validate reports unusable parameters.
func (p Params) Validate() error {
	if p.MaxSoftTokens <= 0 || p.PatchSize <= 0 || p.PoolingKernel <= 0 {
		return fmt.Errorf("vision: bad parameters %+v", p)
	}
	return nil
}

// Target is the size the image is resized to and what it costs.
type Target struct {
	W, H       int
	SoftTokens int    // (H/side)·(W/side), side = PatchSize·PoolingKernel
	Branch     string // "normal", "height_was_0" or "width_was_0" (the reference's cases)
}

// TargetSize applies the reference's aspect-preserving rule to a w×h image;
// it shrinks or enlarges the image to fill the soft-token budget.
func TargetSize(w, h int, p Params) (Target, error) {
	if err := p.Validate(); err != nil {
		return Target{}, err
	}
	if w <= 0 || h <= 0 {
		return Target{}, fmt.Errorf("vision: image has no pixels (%dx%d)", w, h)
	}
	k, ps := p.PoolingKernel, p.PatchSize
	maxPatches := p.MaxSoftTokens * k * k
	targetPx := float64(maxPatches * ps * ps)
	factor := math.Sqrt(targetPx / float64(h*w))
	side := k * ps
	th := int(math.Floor(float64(factor*float64(h))/float64(side))) * side
	tw := int(math.Floor(float64(factor*float64(w))/float64(side))) * side
	maxSide := (maxPatches / (k * k)) * side
	t := Target{W: tw, H: th, Branch: "normal"}
	switch {
	case th == 0 && tw == 0:
		return Target{}, errors.New("vision: the image is too small for this budget")
	case th == 0:
		t.H, t.W, t.Branch = side, min(int(math.Floor(float64(w)/float64(h)))*side, maxSide), "height_was_0"
	case tw == 0:
		t.W, t.H, t.Branch = side, min(int(math.Floor(float64(h)/float64(w)))*side, maxSide), "width_was_0"
	}
	t.SoftTokens = (t.H / side) * (t.W / side)
	return t, nil
}

// rescale[v] = float32(v) * float32(1/255): mlx-vlm's float32 multiply (HF's
// float64 multiply differs by 1 ulp for 126 of the 256 values).
var rescale [256]float32

func init() {
	f := float32(1.0 / 255.0)
	for i := range rescale {
		rescale[i] = float32(i) * f
	}
}

// Rescale returns the model input value for an 8-bit sample.
func Rescale(v uint8) float32 { return rescale[v] }

// Patches are flattened square patches of a rescaled image.
type Patches struct {
	Size       int       // patch side in pixels (16 SigLIP, 48 unified)
	Dim        int       // Size·Size·3 (768 or 6912)
	Cols, Rows int       // real patch grid
	Real       int       // Cols·Rows real patches, first in Data
	N          int       // rows in Data including padding
	Data       []float32 // [N][Dim], each row laid out [dy][dx][c]; padding rows are zero
	Pos        []int32   // [N][2] (x = column, y = row); (-1, -1) for padding
}

// Patchify cuts img (sides multiples of size) into size×size patches, row-major
// (y outer, x inner), rescaled, padded with zero rows to padTo (if larger).
func Patchify(img *picture.RGB, size, padTo int) (*Patches, error) {
	if size <= 0 || img.W%size != 0 || img.H%size != 0 {
		return nil, fmt.Errorf("vision: %dx%d image is not a whole number of %d-px patches", img.W, img.H, size)
	}
	cols, rows := img.W/size, img.H/size
	nReal := cols * rows
	n := max(nReal, padTo)
	dim := size * size * 3
	p := &Patches{Size: size, Dim: dim, Cols: cols, Rows: rows, Real: nReal, N: n,
		Data: make([]float32, n*dim), Pos: make([]int32, 2*n)}
	for py := 0; py < rows; py++ {
		for px := 0; px < cols; px++ {
			idx := py*cols + px
			p.Pos[2*idx], p.Pos[2*idx+1] = int32(px), int32(py)
			dst := p.Data[idx*dim : (idx+1)*dim]
			for dy := 0; dy < size; dy++ {
				src := img.Pix[3*((py*size+dy)*img.W+px*size):][:3*size]
				row := dst[dy*3*size : (dy+1)*3*size]
				for i, v := range src {
					row[i] = rescale[v]
				}
			}
		}
	}
	for i := nReal; i < n; i++ {
		p.Pos[2*i], p.Pos[2*i+1] = -1, -1
	}
	return p, nil
}

// Input is everything a vision tower needs for one image (or video frame).
type Input struct {
	Resized *picture.RGB
	Target  Target
	Patches *Patches
}

// Prepare resizes img to the budget and patchifies it for p.Tower: SigLIP
// rows are padded to MaxSoftTokens·k², unified rows to MaxSoftTokens
// (unless p.Unpadded).
func Prepare(img *picture.RGB, p Params) (*Input, error) {
	return PrepareSource(picture.FromRGB(img), p)
}

// PrepareBytes decodes an image file and prepares it; a JPEG is converted
// row by row inside the resize instead of as a full-size RGB copy.
func PrepareBytes(ctx context.Context, data []byte, lim picture.Limits, p Params) (*Input, picture.Info, error) {
	src, info, err := picture.DecodeSource(ctx, data, lim)
	if err != nil {
		return nil, info, err
	}
	in, err := PrepareSource(src, p)
	return in, info, err
}

// PrepareSource is Prepare for a decoded, possibly not yet converted, image.
func PrepareSource(src *picture.Source, p Params) (*Input, error) {
	w, h := src.Size()
	t, err := TargetSize(w, h, p)
	if err != nil {
		return nil, err
	}
	var resized *picture.RGB
	if t.W == w && t.H == h {
		resized = src.RGB()
	} else {
		pix, err := resample.Bicubic(src, t.W, t.H)
		if err != nil {
			return nil, err
		}
		resized = &picture.RGB{W: t.W, H: t.H, Pix: pix}
	}
	size, padTo := p.PatchSize, p.MaxSoftTokens*p.PoolingKernel*p.PoolingKernel
	if p.Tower == Unified {
		size, padTo = p.PatchSize*p.PoolingKernel, p.MaxSoftTokens
	}
	if p.Unpadded {
		padTo = 0
	}
	patches, err := Patchify(resized, size, padTo)
	if err != nil {
		return nil, err
	}
	return &Input{Resized: resized, Target: t, Patches: patches}, nil
}
