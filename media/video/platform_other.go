//go:build !darwin

package video

// platformSource is ffmpeg on Linux and other non-Apple systems.
type platformSource = FFmpeg
