package picture

import (
	"bytes"
	"encoding/binary"

	"perch/media/sniff"
)

// orientation finds the EXIF Orientation tag (0x0112) where Pillow's
// getexif() would: a JPEG APP1 "Exif" segment, a PNG eXIf chunk, a WebP EXIF
// chunk, or IFD0 of a TIFF. Missing or invalid values mean 1 (as stored).
func orientation(data []byte, f sniff.Format) int {
	var tiffData []byte
	switch f {
	case sniff.JPEG:
		tiffData = jpegExif(data)
	case sniff.PNG:
		tiffData = pngChunk(data, "eXIf")
	case sniff.WebP:
		tiffData = riffChunk(data, "EXIF")
	case sniff.TIFF:
		tiffData = data
	}
	tiffData = bytes.TrimPrefix(tiffData, []byte("Exif\x00\x00"))
	if o := tiffOrientation(tiffData); o >= 1 && o <= 8 {
		return o
	}
	return 1
}

func jpegExif(b []byte) []byte {
	if len(b) < 4 || b[0] != 0xff || b[1] != 0xd8 {
		return nil
	}
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xff {
			return nil
		}
		marker := b[i+1]
		if marker == 0xff { // fill byte
			i++
			continue
		}
		if marker == 0xda || marker == 0xd9 { // start of scan, end of image
			return nil
		}
		if marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7) {
			i += 2
			continue
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return nil
		}
		seg := b[i+4 : i+2+n]
		if marker == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return seg[6:]
		}
		i += 2 + n
	}
	return nil
}

func pngChunk(b []byte, typ string) []byte {
	for i := 8; i+12 <= len(b); {
		n := int64(binary.BigEndian.Uint32(b[i:]))
		if n > int64(len(b)-i-12) {
			return nil
		}
		if string(b[i+4:i+8]) == typ {
			return b[i+8 : i+8+int(n)]
		}
		i += 12 + int(n)
	}
	return nil
}

func riffChunk(b []byte, typ string) []byte {
	for i := 12; i+8 <= len(b); {
		n := int64(binary.LittleEndian.Uint32(b[i+4:]))
		if n > int64(len(b)-i-8) {
			return nil
		}
		if string(b[i:i+4]) == typ {
			return b[i+8 : i+8+int(n)]
		}
		i += 8 + int(n) + int(n&1)
	}
	return nil
}

// tiffOrientation reads tag 0x0112 from IFD0 of a TIFF structure.
func tiffOrientation(b []byte) int {
	if len(b) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(b[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 0
	}
	off := int64(bo.Uint32(b[4:]))
	if off < 8 || off+2 > int64(len(b)) {
		return 0
	}
	n := int64(bo.Uint16(b[off:]))
	for i := int64(0); i < n; i++ {
		e := off + 2 + 12*i
		if e+12 > int64(len(b)) {
			return 0
		}
		if bo.Uint16(b[e:]) == 0x0112 && bo.Uint16(b[e+2:]) == 3 {
			return int(bo.Uint16(b[e+8:]))
		}
	}
	return 0
}

// gifFrames counts the image descriptors in a GIF without decoding pixels
// (at most 100000; a broken stream counts what was seen).
func gifFrames(b []byte) int {
	if len(b) < 13 {
		return 0
	}
	i := 13
	if b[10]&0x80 != 0 {
		i += 3 << (b[10]&7 + 1)
	}
	skipBlocks := func(i int) int {
		for i < len(b) {
			n := int(b[i])
			i++
			if n == 0 {
				return i
			}
			i += n
		}
		return len(b)
	}
	frames := 0
	for i < len(b) && frames < 100000 {
		switch b[i] {
		case 0x21: // extension: label, then sub-blocks
			i = skipBlocks(i + 2)
		case 0x2c: // image descriptor, optional local table, LZW min code size, data
			if i+10 > len(b) {
				return frames
			}
			frames++
			flags := b[i+9]
			i += 10
			if flags&0x80 != 0 {
				i += 3 << (flags&7 + 1)
			}
			i = skipBlocks(i + 1)
		default: // 0x3b trailer or garbage
			return frames
		}
	}
	return frames
}
