package jpeg

import (
	"context"
	"image"
	"runtime"
	"sync"
)

// coefRow is one MCU row of quantised coefficients: for each component,
// its v block rows of bw blocks, in plane order.
type coefRow struct {
	my     int         // MCU row index
	blocks [][64]int16 // all components' blocks, zero before decoding
	last   []uint8     // last coded zigzag position of each block
	offs   []int       // first block of each component
}

// newCoefRow allocates an MCU row's buffers.
func (d *decoder) newCoefRow() *coefRow {
	r := &coefRow{offs: make([]int, len(d.comps))}
	n := 0
	for i, c := range d.comps {
		r.offs[i] = n
		n += c.v * c.bw
	}
	r.blocks, r.last = make([][64]int16, n), make([]uint8, n)
	return r
}

// decodeRow entropy-decodes MCU row my into row, handling restart markers.
func (d *decoder) decodeRow(br *bitReader, row *coefRow, my int, preds []int32, mcu *int) error {
	row.my = my
	for mx := 0; mx < d.mcusX; mx++ {
		if d.restart > 0 && *mcu > 0 && *mcu%d.restart == 0 {
			if err := br.restartMarker((*mcu/d.restart - 1) & 7); err != nil {
				return err
			}
			clear(preds)
		}
		*mcu++
		for ci := range d.comps {
			c := &d.comps[ci]
			dc, ac := d.dc[c.td], d.ac[c.ta]
			for j := 0; j < c.v; j++ {
				b := row.offs[ci] + j*c.bw + mx*c.h
				for i := 0; i < c.h; i++ {
					last, err := br.decodeBlock(&row.blocks[b+i], dc, ac, &preds[ci])
					if err != nil {
						return err
					}
					row.last[b+i] = uint8(last)
				}
			}
		}
	}
	if br.overrun() {
		return errorf("truncated image data (MCU row %d of %d)", my+1, d.mcusY)
	}
	return nil
}

// restartMarker checks the overrun, expects RSTn at the reader's position
// and resets the bit buffer after it.
func (br *bitReader) restartMarker(n int) error {
	if br.overrun() {
		return errorf("truncated image data before a restart marker")
	}
	p := br.pos
	for p < len(br.data) && br.data[p] == 0xff {
		p++
	}
	if p == br.pos || p >= len(br.data) || br.data[p] != 0xd0+byte(n) {
		return errorf("missing restart marker RST%d", n)
	}
	br.pos, br.bits, br.n, br.fake, br.marker = p+1, 0, 0, 0, false
	return nil
}

// idctRow turns an MCU row's coefficients into samples of every plane.
func (d *decoder) idctRow(row *coefRow) {
	for ci := range d.comps {
		c := &d.comps[ci]
		q := &d.quant[c.tq]
		for j := 0; j < c.v; j++ {
			y0 := (row.my*c.v + j) * 8
			base := row.offs[ci] + j*c.bw
			for bx := 0; bx < c.bw; bx++ {
				dst := c.pix[y0*c.stride+8*bx:]
				idctBlock(&row.blocks[base+bx], q, int(row.last[base+bx]), dst, c.stride)
			}
		}
	}
}

// decodeScan decodes the scan starting at pos into the planes: entropy
// decoding on this goroutine, the IDCT of finished MCU rows on others.
func (d *decoder) decodeScan(ctx context.Context, pos int) error {
	for i := range d.comps {
		c := &d.comps[i]
		c.pix = make([]uint8, c.stride*8*c.bh)
	}
	br := &bitReader{data: d.data, pos: pos}
	preds := make([]int32, len(d.comps))
	mcu := 0
	// As many IDCT workers as CPUs: the entropy decoder needs less than one.
	workers := min(runtime.GOMAXPROCS(0), 4)
	if workers < 2 || d.mcusY < 4 {
		row := d.newCoefRow()
		for my := 0; my < d.mcusY; my++ {
			if err := d.decodeRow(br, row, my, preds, &mcu); err != nil {
				return err
			}
			d.idctRow(row)
			if my%16 == 15 && ctx.Err() != nil {
				return ctx.Err()
			}
		}
		return nil
	}
	free, work := make(chan *coefRow, workers+2), make(chan *coefRow, workers+2)
	for i := 0; i < workers+2; i++ {
		free <- d.newCoefRow()
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for row := range work {
				d.idctRow(row)
				free <- row
			}
		}()
	}
	var err error
	for my := 0; my < d.mcusY && err == nil; my++ {
		row := <-free
		if err = d.decodeRow(br, row, my, preds, &mcu); err == nil {
			work <- row
		}
		if my%16 == 15 && err == nil {
			err = ctx.Err()
		}
	}
	close(work)
	wg.Wait()
	return err
}

// ycbcrRatio maps luma sampling factors (chroma 1×1) to image.YCbCr's ratio.
func ycbcrRatio(h, v int) (image.YCbCrSubsampleRatio, bool) {
	switch [2]int{h, v} {
	case [2]int{1, 1}:
		return image.YCbCrSubsampleRatio444, true
	case [2]int{2, 1}:
		return image.YCbCrSubsampleRatio422, true
	case [2]int{2, 2}:
		return image.YCbCrSubsampleRatio420, true
	case [2]int{1, 2}:
		return image.YCbCrSubsampleRatio440, true
	case [2]int{4, 1}:
		return image.YCbCrSubsampleRatio411, true
	case [2]int{4, 2}:
		return image.YCbCrSubsampleRatio410, true
	}
	return 0, false
}
