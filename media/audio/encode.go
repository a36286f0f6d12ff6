package audio

import (
	"errors"
	"fmt"
	"io"
	"math"

	goaudio "github.com/go-audio/audio"
	"github.com/go-audio/wav"
)

// EncodeWAV writes mono float samples as a 16-bit PCM WAV (go-audio/wav),
// rounding and clipping to int16.
func EncodeWAV(samples []float32, rate int) ([]byte, error) {
	if rate < MinRate || rate > MaxRate {
		return nil, fmt.Errorf("audio: sample rate %d Hz", rate)
	}
	ws := &memFile{}
	enc := wav.NewEncoder(ws, rate, 16, 1, fmtPCM)
	buf := &goaudio.IntBuffer{Format: &goaudio.Format{NumChannels: 1, SampleRate: rate}, SourceBitDepth: 16,
		Data: make([]int, len(samples))}
	for i, v := range samples {
		buf.Data[i] = int(math.Round(float64(max(-1, min(v, 32767.0/32768)) * 32768)))
	}
	if err := enc.Write(buf); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return ws.b, nil
}

// memFile is an in-memory io.WriteSeeker for the encoder's header patching.
type memFile struct {
	b   []byte
	off int
}

func (m *memFile) Write(p []byte) (int, error) {
	if need := m.off + len(p); need > len(m.b) {
		m.b = append(m.b, make([]byte, need-len(m.b))...)
	}
	copy(m.b[m.off:], p)
	m.off += len(p)
	return len(p), nil
}

func (m *memFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += int64(m.off)
	case io.SeekEnd:
		offset += int64(len(m.b))
	}
	if offset < 0 {
		return 0, errors.New("memFile: negative position")
	}
	m.off = int(offset)
	return offset, nil
}
