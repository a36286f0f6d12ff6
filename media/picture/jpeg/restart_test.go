package jpeg

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

// A test-only re-encoder: it rewrites a baseline file's entropy-coded data
// with a restart marker every interval MCUs (T.81 B.2.4.4, F.1.2), using the
// file's own Huffman tables, so restart handling is tested without ffmpeg.

// huffCode is one symbol's code: the low n bits of code.
type huffCode struct {
	code uint32
	n    uint
}

// bitWriter packs bits most significant first, stuffing 0x00 after 0xFF.
type bitWriter struct {
	out  []byte
	acc  uint64
	nacc uint
}

// put appends the low n bits of v.
func (w *bitWriter) put(v uint32, n uint) {
	w.acc = w.acc<<n | uint64(v)&(1<<n-1)
	w.nacc += n
	for w.nacc >= 8 {
		b := byte(w.acc >> (w.nacc - 8))
		w.out = append(w.out, b)
		if b == 0xff {
			w.out = append(w.out, 0)
		}
		w.nacc -= 8
	}
}

// flush pads the last byte with one bits.
func (w *bitWriter) flush() {
	if w.nacc > 0 {
		w.put(1<<(8-w.nacc)-1, 8-w.nacc)
	}
}

// tableCodes reads every DHT segment before the scan into code tables,
// indexed [class][id][symbol].
func tableCodes(t testing.TB, data []byte, end int) (codes [2][4][256]huffCode) {
	for p := 2; p+4 <= end; {
		m, n := data[p+1], int(binary.BigEndian.Uint16(data[p+2:]))
		seg := data[p+4 : p+2+n]
		p += 2 + n
		for m == 0xc4 && len(seg) > 0 {
			class, id := seg[0]>>4, seg[0]&15
			k, code := 17, uint32(0)
			for l := 1; l <= 16; l++ {
				for i := 0; i < int(seg[l]); i++ {
					codes[class][id][seg[k]] = huffCode{code, uint(l)}
					code++
					k++
				}
				code <<= 1
			}
			seg = seg[k:]
		}
	}
	return codes
}

// encodeBlock writes one block of quantised coefficients (natural order).
func encodeBlock(w *bitWriter, blk *[64]int16, dc, ac *[256]huffCode, pred *int16) {
	value := func(v int) (uint32, uint) {
		s := uint(bits.Len(uint(max(v, -v))))
		if v < 0 {
			v--
		}
		return uint32(v), s
	}
	v, s := value(int(blk[0]) - int(*pred))
	*pred = blk[0]
	w.put(dc[s].code, dc[s].n)
	w.put(v, s)
	run := 0
	for k := 1; k < 64; k++ {
		c := int(blk[zigzag[k]])
		if c == 0 {
			run++
			continue
		}
		for ; run > 15; run -= 16 {
			w.put(ac[0xf0].code, ac[0xf0].n)
		}
		v, s := value(c)
		sym := run<<4 | int(s)
		w.put(ac[sym].code, ac[sym].n)
		w.put(v, s)
		run = 0
	}
	if run > 0 {
		w.put(ac[0].code, ac[0].n)
	}
}

// withRestarts returns data (a single-scan baseline JPEG) re-encoded with
// a DRI segment and RSTn markers every interval MCUs.
func withRestarts(t testing.TB, data []byte, interval int) []byte {
	t.Helper()
	d := &decoder{data: data}
	pos, err := d.parse(noLimit)
	if err != nil {
		t.Fatal(err)
	}
	sos := pos - 1
	for ; sos > 0; sos-- {
		if data[sos] == 0xff && data[sos+1] == 0xda && sos+2+int(binary.BigEndian.Uint16(data[sos+2:])) == pos {
			break
		}
	}
	codes := tableCodes(t, data, sos)
	br := &bitReader{data: data, pos: pos}
	readPreds, writePreds := make([]int32, len(d.comps)), make([]int16, len(d.comps))
	var w bitWriter
	mcu, written := 0, 0
	for my := 0; my < d.mcusY; my++ {
		row := d.newCoefRow()
		if err := d.decodeRow(br, row, my, readPreds, &mcu); err != nil {
			t.Fatal(err)
		}
		for mx := 0; mx < d.mcusX; mx++ {
			if written > 0 && written%interval == 0 {
				w.flush()
				w.out = append(w.out, 0xff, 0xd0+byte((written/interval-1)&7))
				clear(writePreds)
			}
			written++
			for ci, c := range d.comps {
				for j := 0; j < c.v; j++ {
					for i := 0; i < c.h; i++ {
						b := row.offs[ci] + j*c.bw + mx*c.h + i
						encodeBlock(&w, &row.blocks[b], &codes[0][c.td], &codes[1][c.ta], &writePreds[ci])
					}
				}
			}
		}
	}
	w.flush()
	out := append([]byte{}, data[:sos]...)
	out = append(out, 0xff, 0xdd, 0, 4, byte(interval>>8), byte(interval))
	out = append(out, data[sos:pos]...)
	out = append(out, w.out...)
	return append(out, 0xff, 0xd9)
}
