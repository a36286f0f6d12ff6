package jpeg

import "encoding/binary"

// Huffman decoding of baseline coefficients (T.81 F.2.2) with a 64-bit bit
// buffer and 9-bit lookahead tables.

const lookBits = 9

// huffTable is one decoding table built from a DHT segment.
type huffTable struct {
	look    [1 << lookBits]uint16 // symbol | length<<8 for codes of ≤ 9 bits; 0 if longer
	fastAC  [1 << lookBits]int32  // AC: value<<16 | run<<8 | bits, when code and value fit in 9 bits
	maxcode [17]int32             // largest code of each length, -1 if none
	valoff  [17]int32             // index in vals of code c of length l is valoff[l] + c
	vals    [256]uint8
}

// newHuffTable builds canonical codes from the 16 length counts (C.2) and
// refuses tables that libjpeg refuses (a code of all ones, DC sizes over 15).
func newHuffTable(counts [16]uint8, syms []uint8, dc bool) (*huffTable, error) {
	t := &huffTable{}
	copy(t.vals[:], syms)
	code, k := int32(0), int32(0)
	for l := 1; l <= 16; l++ {
		n := int32(counts[l-1])
		t.maxcode[l] = -1
		if code+n >= 1<<l {
			return nil, errorf("bad Huffman table")
		}
		if n > 0 {
			t.valoff[l] = k - code
			for i := int32(0); i < n; i++ {
				if l <= lookBits {
					shift := lookBits - l
					base := (code + i) << shift
					for j := int32(0); j < 1<<shift; j++ {
						t.look[base+j] = uint16(syms[k+i]) | uint16(l)<<8
					}
				}
			}
			code += n
			k += n
			t.maxcode[l] = code - 1
		}
		code <<= 1
	}
	if dc {
		for _, s := range syms {
			if s > 15 {
				return nil, errorf("bad DC Huffman table")
			}
		}
		return t, nil
	}
	for i, e := range t.look {
		run, size, l := int32(e>>4)&15, int32(e)&15, int32(e>>8)
		if l == 0 || size == 0 || l+size > lookBits {
			continue
		}
		v := (int32(i) >> (lookBits - l - size)) & (1<<size - 1)
		if v < 1<<(size-1) {
			v -= 1<<size - 1
		}
		t.fastAC[i] = v<<16 | run<<8 | (l + size)
	}
	return t, nil
}

// bitReader reads entropy-coded bits, removing stuffed zero bytes. At a
// marker or the end of the data it supplies zero bits and counts them, so a
// decoder can tell when it has read past the real data.
type bitReader struct {
	data   []byte
	pos    int    // next byte; at a marker, its first 0xFF
	bits   uint64 // unread bits, most significant first
	n      uint   // how many bits of bits are valid
	fake   uint   // zero bits supplied past the data (the last fake bits of bits)
	marker bool   // pos is at a marker or the end
}

// fill tops bits up to at least 57 valid bits.
func (r *bitReader) fill(bits uint64, n uint) (uint64, uint) {
	for n <= 56 {
		if !r.marker && r.pos+8 <= len(r.data) {
			v := binary.BigEndian.Uint64(r.data[r.pos:])
			if x := ^v; (x-0x0101010101010101)&^x&0x8080808080808080 == 0 { // no 0xFF byte
				k := (64 - n) >> 3
				bits |= v >> (64 - 8*k) << (64 - n - 8*k)
				r.pos += int(k)
				n += 8 * k
				continue
			}
		}
		var b byte
		if !r.marker && r.pos < len(r.data) {
			b = r.data[r.pos]
			if b != 0xff {
				r.pos++
			} else {
				// 0xFF 0x00 is a data byte 0xFF; 0xFF then a code is a marker.
				p := r.pos + 1
				for p < len(r.data) && r.data[p] == 0xff {
					p++
				}
				if p < len(r.data) && r.data[p] == 0 {
					r.pos = p + 1
				} else {
					r.marker, b = true, 0
				}
			}
		} else {
			r.marker = true
		}
		if r.marker {
			r.fake += 8
		}
		bits |= uint64(b) << (56 - n)
		n += 8
	}
	return bits, n
}

// overrun reports whether bits past the real data have been consumed.
func (r *bitReader) overrun() bool { return r.n < r.fake }

// slowCode decodes a code longer than the lookahead from the top 16 bits.
func (t *huffTable) slowCode(bits uint64) (sym uint8, l uint, ok bool) {
	c16 := int32(bits >> 48)
	for l := 1 + lookBits; l <= 16; l++ {
		c := c16 >> (16 - l)
		if c <= t.maxcode[l] {
			return t.vals[uint8(t.valoff[l]+c)], uint(l), true
		}
	}
	return 0, 0, false
}

// extend turns the s-bit value v into the signed coefficient (F.2.2.1).
func extend(v uint64, s uint) int32 {
	if s == 0 {
		return 0
	}
	x := int32(v)
	if x < 1<<(s-1) {
		x -= 1<<s - 1
	}
	return x
}

// decodeBlock decodes one block's coefficients into blk (natural order,
// quantised; blk must be zero), updates the DC predictor and returns the
// last coded zigzag position (0 when only DC).
func (r *bitReader) decodeBlock(blk *[64]int16, dc, ac *huffTable, pred *int32) (int, error) {
	bits, n := r.bits, r.n
	if n < 32 {
		bits, n = r.fill(bits, n)
	}
	e := dc.look[bits>>(64-lookBits)]
	s, l := uint(e&0xff), uint(e>>8)
	if e == 0 {
		sym, ll, ok := dc.slowCode(bits)
		if !ok {
			return 0, errorf("bad Huffman code")
		}
		s, l = uint(sym), ll
	}
	bits <<= l
	n -= l
	v := extend(bits>>(64-s), s)
	bits <<= s
	n -= s
	*pred += v
	blk[0] = int16(*pred)
	last := 0
	for k := 1; k < 64; {
		if n < 32 {
			bits, n = r.fill(bits, n)
		}
		if f := ac.fastAC[bits>>(64-lookBits)]; f != 0 {
			k += int(f>>8) & 15
			bits <<= uint(f & 0xff)
			n -= uint(f & 0xff)
			if k > 63 {
				return 0, errorf("corrupt block (coefficient past 63)")
			}
			blk[zigzag[k]] = int16(f >> 16)
			last = k
			k++
			continue
		}
		e := ac.look[bits>>(64-lookBits)]
		rs, l := uint8(e), uint(e>>8)
		if e == 0 {
			sym, ll, ok := ac.slowCode(bits)
			if !ok {
				return 0, errorf("bad Huffman code")
			}
			rs, l = sym, ll
		}
		bits <<= l
		n -= l
		run, size := int(rs>>4), uint(rs&15)
		if size == 0 {
			if run != 15 {
				break // end of block
			}
			k += 16
			continue
		}
		k += run
		if k > 63 {
			return 0, errorf("corrupt block (coefficient past 63)")
		}
		blk[zigzag[k]] = int16(extend(bits>>(64-size), size))
		bits <<= size
		n -= size
		last = k
		k++
	}
	r.bits, r.n = bits, n
	return last, nil
}
