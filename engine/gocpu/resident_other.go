//go:build !linux

package gocpu

// hugeRegion: only Linux gets the copies (macOS runs MLX; elsewhere the
// weights are read where the checkpoint maps them).
func hugeRegion(size int) (region, mapping []byte) { return nil, nil }

func freeRegion(mapping []byte) {}

func hugePagesOn() bool { return false }

func pageOut(src []byte) {}
