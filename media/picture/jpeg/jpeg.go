// Package jpeg is Perch's own baseline JPEG decoder (ITU T.81, sequential
// Huffman, 8-bit) and libjpeg's YCbCr→RGB conversion, so that a photo's
// pixels equal what Pillow (libjpeg-turbo's default decoding) shows the
// Gemma-4 reference: the integer "islow" IDCT, "fancy" chroma upsampling and
// libjpeg's YCC tables.
//
// It owns nothing but that decoding. Data flows one way: media/picture hands
// it a file's bytes and a size check (Decode → YCbCr, gray or RGB planes,
// checked against the caller's limits before any plane is allocated), then
// reads converted rows from those planes (RowPlanes) when a picture is resampled
// or materialised. Progressive, arithmetic, 12-bit, lossless, CMYK/YCCK,
// multi-scan and odd sampling layouts are ErrNotBaseline: valid files the
// caller decodes elsewhere (media/picture uses image/jpeg).
package jpeg

import (
	"context"
	"errors"
	"fmt"
	"image"
)

// ErrNotBaseline marks a valid JPEG this decoder leaves to another one.
var ErrNotBaseline = errors.New("jpeg: not baseline")

// errorf is a corrupt or truncated file.
func errorf(format string, args ...any) error {
	return fmt.Errorf("jpeg: "+format, args...)
}

// Decode decodes a baseline JPEG to *image.YCbCr, *image.Gray or (for
// RGB-coded files) *image.RGBA, or returns ErrNotBaseline. sizeOK sees the
// frame's width and height first; its error is returned as is. Decode stops
// with ctx's error when ctx ends.
func Decode(ctx context.Context, data []byte, sizeOK func(w, h int) error) (image.Image, error) {
	d := &decoder{data: data}
	pos, err := d.parse(sizeOK)
	if err != nil {
		return nil, err
	}
	if err := d.decodeScan(ctx, pos); err != nil {
		return nil, err
	}
	rect := image.Rect(0, 0, d.w, d.h)
	if len(d.comps) == 1 {
		c := d.comps[0]
		return &image.Gray{Pix: c.pix, Stride: c.stride, Rect: rect}, nil
	}
	y, cb, cr := d.comps[0], d.comps[1], d.comps[2]
	if d.colorRGB() {
		m := image.NewRGBA(rect)
		for j := 0; j < d.h; j++ {
			dst := m.Pix[j*m.Stride:][:4*d.w]
			r, g, b := y.pix[j*y.stride:][:d.w], cb.pix[j*cb.stride:][:d.w], cr.pix[j*cr.stride:][:d.w]
			for i := range r {
				dst[4*i], dst[4*i+1], dst[4*i+2], dst[4*i+3] = r[i], g[i], b[i], 255
			}
		}
		return m, nil
	}
	ratio, _ := d.chromaRatio()
	return &image.YCbCr{Y: y.pix, Cb: cb.pix, Cr: cr.pix, YStride: y.stride, CStride: cb.stride,
		SubsampleRatio: ratio, Rect: rect}, nil
}
