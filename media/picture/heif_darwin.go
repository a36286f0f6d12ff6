//go:build darwin

package picture

import (
	"context"
	"fmt"

	"github.com/progrium/darwinkit/macos/coreimage"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"

	"perch/media/internal/apple"
	"perch/media/sniff"
)

// platformCodec decodes HEIC and AVIF with Core Image (ImageIO underneath),
// applying the file's own orientation (irot/imir or EXIF).
type platformCodec struct{}

func (platformCodec) Decode(ctx context.Context, data []byte, f sniff.Format, lim Limits) (*RGB, error) {
	var out *RGB
	var err error
	objc.WithAutoreleasePool(func() {
		opts := map[coreimage.ImageOption]objc.IObject{
			coreimage.ImageOption("kCIImageApplyOrientationProperty"): foundation.Number_NumberWithBool(true),
		}
		img := coreimage.NewImageWithDataOptions(data, opts)
		if img.IsNil() {
			err = fmt.Errorf("decoding %s: the system could not read the image", f)
			return
		}
		ext := img.Extent()
		if err = lim.check(int(ext.Size.Width), int(ext.Size.Height)); err != nil {
			return
		}
		m, rerr := apple.Render(img)
		if rerr != nil {
			err = fmt.Errorf("decoding %s: %w", f, rerr)
			return
		}
		out = toRGB(m, false)
	})
	return out, err
}
