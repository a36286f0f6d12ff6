package jpeg

import (
	"encoding/binary"
	"image"
)

// component is one colour component of the frame (T.81 B.2.2) and its plane.
type component struct {
	id     uint8
	h, v   int   // sampling factors within an MCU
	tq     uint8 // quantisation table
	td, ta uint8 // DC and AC Huffman tables of the scan
	bw, bh int   // blocks per row and per column, whole MCUs
	pix    []uint8
	stride int // 8·bw
}

// decoder holds the tables and frame of one file.
type decoder struct {
	data           []byte
	w, h           int
	comps          []component
	hmax, vmax     int
	mcusX, mcusY   int
	quant          [4][64]int32 // natural order
	quantSet       [4]bool
	dc, ac         [4]*huffTable
	restart        int // MCUs per restart interval; 0 = none
	jfif, adobe    bool
	adobeTransform uint8
	frame          bool
}

// parse reads markers up to and including the first SOS and returns the
// offset of the entropy-coded data that follows it.
func (d *decoder) parse(sizeOK func(w, h int) error) (int, error) {
	data := d.data
	if len(data) < 4 || data[0] != 0xff || data[1] != 0xd8 {
		return 0, errorf("missing SOI marker")
	}
	pos := 2
	for {
		// Markers are 0xFF (fill 0xFF)* code; libjpeg skips stray bytes before one.
		for pos < len(data) && data[pos] != 0xff {
			pos++
		}
		for pos < len(data) && data[pos] == 0xff {
			pos++
		}
		if pos >= len(data) {
			return 0, errorf("truncated before the image data")
		}
		m := data[pos]
		pos++
		switch {
		case m == 0xd9:
			return 0, errorf("no image data before EOI")
		case m == 0x01 || (m >= 0xd0 && m <= 0xd7):
			continue // standalone markers
		}
		if pos+2 > len(data) {
			return 0, errorf("truncated marker segment")
		}
		n := int(binary.BigEndian.Uint16(data[pos:]))
		if n < 2 || pos+n > len(data) {
			return 0, errorf("truncated marker segment %#02x", m)
		}
		seg := data[pos+2 : pos+n]
		pos += n
		var err error
		switch {
		case m == 0xc0 || m == 0xc1:
			err = d.parseSOF(seg, sizeOK)
		case m >= 0xc2 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc:
			return 0, ErrNotBaseline // progressive, lossless, arithmetic, hierarchical
		case m == 0xc4:
			err = d.parseDHT(seg)
		case m == 0xdb:
			err = d.parseDQT(seg)
		case m == 0xdd:
			if len(seg) != 2 {
				return 0, errorf("bad DRI segment")
			}
			d.restart = int(binary.BigEndian.Uint16(seg))
		case m == 0xda:
			return pos, d.parseSOS(seg)
		case m == 0xdc:
			return 0, ErrNotBaseline // DNL: height defined after the scan
		case m == 0xe0:
			d.jfif = d.jfif || (len(seg) >= 5 && string(seg[:5]) == "JFIF\x00")
		case m == 0xee:
			if len(seg) >= 12 && string(seg[:5]) == "Adobe" {
				d.adobe, d.adobeTransform = true, seg[11]
			}
		}
		if err != nil {
			return 0, err
		}
	}
}

// parseSOF reads the frame header (B.2.2), refusing sizes sizeOK refuses.
func (d *decoder) parseSOF(seg []byte, sizeOK func(w, h int) error) error {
	if d.frame {
		return errorf("more than one frame header")
	}
	if len(seg) < 6 {
		return errorf("short SOF segment")
	}
	if seg[0] != 8 {
		return ErrNotBaseline // 12-bit samples
	}
	d.h, d.w = int(binary.BigEndian.Uint16(seg[1:])), int(binary.BigEndian.Uint16(seg[3:]))
	if d.h == 0 {
		return ErrNotBaseline // height from a DNL marker
	}
	if err := sizeOK(d.w, d.h); err != nil {
		return err
	}
	nc := int(seg[5])
	if nc != 1 && nc != 3 {
		return ErrNotBaseline // CMYK/YCCK and other component counts
	}
	if len(seg) != 6+3*nc {
		return errorf("bad SOF length")
	}
	d.comps = make([]component, nc)
	d.hmax, d.vmax = 1, 1
	for i := range d.comps {
		c := &d.comps[i]
		b := seg[6+3*i:]
		c.id, c.h, c.v, c.tq = b[0], int(b[1]>>4), int(b[1]&15), b[2]
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.tq > 3 {
			return errorf("bad component %d in SOF", c.id)
		}
		d.hmax, d.vmax = max(d.hmax, c.h), max(d.vmax, c.v)
	}
	if nc == 1 {
		// One component is coded non-interleaved: one block per MCU (A.2.2).
		d.comps[0].h, d.comps[0].v, d.hmax, d.vmax = 1, 1, 1, 1
	} else if !d.layoutSupported() {
		return ErrNotBaseline
	}
	d.mcusX = (d.w + 8*d.hmax - 1) / (8 * d.hmax)
	d.mcusY = (d.h + 8*d.vmax - 1) / (8 * d.vmax)
	for i := range d.comps {
		c := &d.comps[i]
		c.bw, c.bh = d.mcusX*c.h, d.mcusY*c.v
		c.stride = 8 * c.bw
	}
	d.frame = true
	return nil
}

// layoutSupported: three components, Cb and Cr sampled alike, luma at the
// largest factors and a luma:chroma ratio image.YCbCr has (ffmpeg writes
// 4:2:2 as 2×2 and 1×2, for example). RGB needs all three alike.
func (d *decoder) layoutSupported() bool {
	y, cb, cr := d.comps[0], d.comps[1], d.comps[2]
	if cb.h != cr.h || cb.v != cr.v || y.h != d.hmax || y.v != d.vmax {
		return false
	}
	if d.colorRGB() {
		return cb.h == y.h && cb.v == y.v
	}
	_, ok := d.chromaRatio()
	return ok
}

// chromaRatio is the luma:chroma sampling ratio as image.YCbCr names it.
func (d *decoder) chromaRatio() (image.YCbCrSubsampleRatio, bool) {
	y, c := d.comps[0], d.comps[1]
	if y.h%c.h != 0 || y.v%c.v != 0 {
		return 0, false
	}
	return ycbcrRatio(y.h/c.h, y.v/c.v)
}

// colorRGB says whether three components are stored as RGB rather than
// YCbCr, by libjpeg's rules: JFIF means YCbCr, then Adobe's transform flag,
// then component ids 'R', 'G', 'B'.
func (d *decoder) colorRGB() bool {
	switch {
	case d.jfif:
		return false
	case d.adobe:
		return d.adobeTransform == 0
	}
	return d.comps[0].id == 'R' && d.comps[1].id == 'G' && d.comps[2].id == 'B'
}

// parseDQT reads quantisation tables (B.2.4.1) into natural order.
func (d *decoder) parseDQT(seg []byte) error {
	for len(seg) > 0 {
		pq, tq := seg[0]>>4, seg[0]&15
		if tq > 3 || pq > 1 {
			return errorf("bad DQT table %d/%d", pq, tq)
		}
		size := 64 << pq
		if len(seg) < 1+size {
			return errorf("short DQT segment")
		}
		for k := 0; k < 64; k++ {
			v := int32(seg[1+k])
			if pq == 1 {
				v = int32(binary.BigEndian.Uint16(seg[1+2*k:]))
			}
			d.quant[tq][zigzag[k]] = v
		}
		d.quantSet[tq] = true
		seg = seg[1+size:]
	}
	return nil
}

// parseDHT reads Huffman tables (B.2.4.2).
func (d *decoder) parseDHT(seg []byte) error {
	for len(seg) > 0 {
		if len(seg) < 17 {
			return errorf("short DHT segment")
		}
		tc, th := seg[0]>>4, seg[0]&15
		if tc > 1 || th > 3 {
			return errorf("bad DHT table %d/%d", tc, th)
		}
		var counts [16]uint8
		copy(counts[:], seg[1:17])
		total := 0
		for _, c := range counts {
			total += int(c)
		}
		if total > 256 || len(seg) < 17+total {
			return errorf("short DHT segment")
		}
		t, err := newHuffTable(counts, seg[17:17+total], tc == 0)
		if err != nil {
			return err
		}
		if tc == 0 {
			d.dc[th] = t
		} else {
			d.ac[th] = t
		}
		seg = seg[17+total:]
	}
	return nil
}

// parseSOS reads the scan header (B.2.3); only one scan holding every
// component is decoded here.
func (d *decoder) parseSOS(seg []byte) error {
	if !d.frame {
		return errorf("scan before frame header")
	}
	if len(seg) < 1 || len(seg) != 4+2*int(seg[0]) {
		return errorf("bad SOS length")
	}
	if int(seg[0]) != len(d.comps) {
		return ErrNotBaseline // non-interleaved multi-scan file
	}
	for i := range d.comps {
		id, tables := seg[1+2*i], seg[2+2*i]
		c := &d.comps[i]
		if c.id != id {
			return ErrNotBaseline // components in another order
		}
		c.td, c.ta = tables>>4, tables&15
		if c.td > 3 || c.ta > 3 || d.dc[c.td] == nil || d.ac[c.ta] == nil {
			return ErrNotBaseline // e.g. MJPEG's implied standard tables
		}
		if !d.quantSet[c.tq] {
			return errorf("component %d uses undefined quantisation table %d", c.id, c.tq)
		}
	}
	return nil
}

// zigzag maps the coded order to natural (row-major) order (T.81 figure A.6).
var zigzag = [64]uint8{
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
}
