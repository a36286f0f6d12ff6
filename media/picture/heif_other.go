//go:build !darwin

package picture

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"perch/media/sniff"
)

// HEIFTimeout bounds one heif-convert run.
var HEIFTimeout = 60 * time.Second

// platformCodec runs libheif's heif-convert (Debian: libheif-examples) in a
// child process, so a decoder crash or hang cannot take Perch down.
type platformCodec struct{}

func (platformCodec) Decode(ctx context.Context, data []byte, f sniff.Format, lim Limits) (*RGB, error) {
	tool, err := exec.LookPath("heif-convert")
	if err != nil {
		return nil, fmt.Errorf("%s images need libheif's heif-convert on this system (Debian/Ubuntu: apt install libheif-examples)", f)
	}
	dir, err := os.MkdirTemp("", "perch-heif-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "in."+string(f)), filepath.Join(dir, "out.png")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, HEIFTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, in, out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("decoding %s: heif-convert did not finish in %v", f, HEIFTimeout)
		}
		return nil, fmt.Errorf("decoding %s: heif-convert failed: %v: %s", f, err, lastLine(stderr.Bytes()))
	}
	pngData, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: heif-convert wrote no image", f)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(pngData))
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", f, err)
	}
	if err := lim.check(cfg.Width, cfg.Height); err != nil {
		return nil, err
	}
	m, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", f, err)
	}
	return toRGB(m, false), nil
}

func lastLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	if len(b) > 200 {
		b = b[:200]
	}
	if len(b) == 0 {
		return "(no message)"
	}
	return string(b)
}
