package picture

import (
	"context"
	"encoding/binary"
	"errors"

	"perch/media/sniff"
)

// Codec decodes the image formats Go has no decoder for (HEIC, AVIF).
type Codec interface {
	Decode(ctx context.Context, data []byte, f sniff.Format, lim Limits) (*RGB, error)
}

// Platform is this OS's Codec: ImageIO on macOS, libheif's heif-convert elsewhere.
var Platform Codec = platformCodec{}

// heifSize returns the largest image extent ('ispe') declared in an HEIF/AVIF
// file: the full canvas of a tiled (grid) photo, so it bounds what a decoder
// will allocate. Walks meta > iprp > ipco without trusting any size.
func heifSize(b []byte) (w, h int, err error) {
	var walk func(b []byte, depth int)
	walk = func(b []byte, depth int) {
		for len(b) >= 8 && depth < 8 {
			size := uint64(binary.BigEndian.Uint32(b))
			typ := string(b[4:8])
			hdr := uint64(8)
			switch size {
			case 0:
				size = uint64(len(b))
			case 1:
				if len(b) < 16 {
					return
				}
				size, hdr = binary.BigEndian.Uint64(b[8:]), 16
			}
			if size < hdr || size > uint64(len(b)) {
				return
			}
			body := b[hdr:size]
			switch typ {
			case "meta":
				if len(body) >= 4 {
					walk(body[4:], depth+1) // FullBox: skip version and flags
				}
			case "iprp", "ipco":
				walk(body, depth+1)
			case "ispe":
				if len(body) >= 12 {
					w = max(w, int(binary.BigEndian.Uint32(body[4:])))
					h = max(h, int(binary.BigEndian.Uint32(body[8:])))
				}
			}
			b = b[size:]
		}
	}
	walk(b, 0)
	if w == 0 || h == 0 {
		return 0, 0, errors.New("no image size (ispe) in the HEIF header")
	}
	return w, h, nil
}
