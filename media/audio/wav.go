package audio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	goaudio "github.com/go-audio/audio"
	"github.com/go-audio/wav"

	"perch/media/sniff"
)

// WAV limits: checked from the header, before any sample is allocated.
const (
	MinRate     = 2000
	MaxRate     = 768000
	MaxChannels = 64
	maxChunks   = 100000
)

// errWAVEncoding marks a valid WAV whose codec (ADPCM, µ-law…) Go does not read.
var errWAVEncoding = errors.New("WAV encoding not read directly:")

const (
	fmtPCM        = 1
	fmtFloat      = 3
	fmtExtensible = 0xfffe
)

// wavHeader is a validated WAV header; data is clamped to the bytes present.
type wavHeader struct {
	format   int // fmtPCM or fmtFloat
	channels int
	rate     int
	bits     int // container bits per sample
	data     []byte
}

func (h wavHeader) frameBytes() int { return h.channels * h.bits / 8 }

// parseWAV walks the RIFF chunks without trusting their sizes: a data chunk
// that claims more than the file holds (0xFFFFFFFF from streaming writers,
// RF64) is clamped; any other chunk that overruns the file is an error.
func parseWAV(b []byte) (wavHeader, error) {
	var h wavHeader
	if len(b) < 12 || (string(b[:4]) != "RIFF" && string(b[:4]) != "RF64" && string(b[:4]) != "BW64") || string(b[8:12]) != "WAVE" {
		return h, fmt.Errorf("not a WAV file (%s)", sniff.Describe(b))
	}
	var haveFmt, haveData bool
	off := 12
	for n := 0; off+8 <= len(b) && !(haveFmt && haveData); n++ {
		if n == maxChunks {
			return h, fmt.Errorf("WAV has more than %d chunks", maxChunks)
		}
		id := string(b[off : off+4])
		size := int64(binary.LittleEndian.Uint32(b[off+4:]))
		body := int64(off + 8)
		remain := int64(len(b)) - body
		if size > remain {
			if id != "data" {
				return h, fmt.Errorf("WAV chunk %q claims %d bytes but only %d remain (truncated or corrupt file)", id, size, remain)
			}
			size = remain
		}
		chunk := b[body : body+size]
		switch id {
		case "fmt ":
			if err := h.parseFmt(chunk); err != nil {
				return h, err
			}
			haveFmt = true
		case "data":
			h.data, haveData = chunk, true
		}
		off = int(body + size + size&1) // chunks are padded to even sizes
	}
	if !haveFmt {
		return h, fmt.Errorf("WAV has no fmt chunk")
	}
	if !haveData {
		return h, fmt.Errorf("WAV has no data chunk")
	}
	return h, nil
}

func (h *wavHeader) parseFmt(c []byte) error {
	if len(c) < 16 {
		return fmt.Errorf("WAV fmt chunk is %d bytes, want at least 16", len(c))
	}
	le := binary.LittleEndian
	h.format = int(le.Uint16(c[0:]))
	h.channels = int(le.Uint16(c[2:]))
	h.rate = int(le.Uint32(c[4:]))
	h.bits = int(le.Uint16(c[14:]))
	if h.format == fmtExtensible {
		if len(c) < 40 {
			return fmt.Errorf("WAV extensible fmt chunk is %d bytes, want 40", len(c))
		}
		h.format = int(le.Uint16(c[24:])) // first two bytes of the sub-format GUID
	}
	switch {
	case h.channels == 0:
		return fmt.Errorf("WAV has zero channels")
	case h.channels > MaxChannels:
		return fmt.Errorf("WAV has %d channels (at most %d supported)", h.channels, MaxChannels)
	case h.rate < MinRate || h.rate > MaxRate:
		return fmt.Errorf("WAV sample rate %d Hz is outside the supported %d Hz to %d kHz", h.rate, MinRate, MaxRate/1000)
	}
	switch {
	case h.format == fmtPCM && (h.bits == 8 || h.bits == 16 || h.bits == 24 || h.bits == 32):
	case h.format == fmtFloat && (h.bits == 32 || h.bits == 64):
	case h.format == fmtPCM || h.format == fmtFloat:
		return fmt.Errorf("unsupported WAV sample size: %d bits", h.bits)
	default:
		return fmt.Errorf("%w 0x%04x", errWAVEncoding, h.format)
	}
	return nil
}

// decodeWAV returns at most maxSeconds of a WAV as interleaved float32, plus
// the header's full duration in seconds. Nothing beyond maxSeconds is decoded.
func decodeWAV(b []byte, maxSeconds float64) (*PCM, float64, error) {
	h, err := parseWAV(b)
	if err != nil {
		return nil, 0, err
	}
	fb := h.frameBytes()
	frames := len(h.data) / fb
	total := float64(frames) / float64(h.rate)
	frames = min(frames, int(math.Ceil(maxSeconds*float64(h.rate))))
	data := h.data[:frames*fb]
	p := &PCM{Rate: h.rate, Channels: h.channels, Samples: make([]float32, frames*h.channels)}
	if h.format == fmtFloat {
		for i := range p.Samples {
			var v float64
			if h.bits == 32 {
				v = float64(math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])))
			} else {
				v = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0 // a broken sample becomes silence, not NaN features
			}
			p.Samples[i] = float32(v)
		}
		return p, total, nil
	}
	if err := decodePCM(h, data, p.Samples); err != nil {
		return nil, 0, err
	}
	return p, total, nil
}

// decodePCM runs go-audio/wav over a canonical copy of the header (its chunk
// readers allocate whatever a chunk claims, so it never sees the original).
func decodePCM(h wavHeader, data []byte, out []float32) error {
	hdr := wavHeaderBytes(fmtPCM, h.channels, h.rate, h.bits, len(data))
	d := wav.NewDecoder(&joined{parts: [2][]byte{hdr, data}})
	if !d.IsValidFile() {
		return fmt.Errorf("decoding WAV: %v", d.Err())
	}
	scale := 1 / float32(int64(1)<<(h.bits-1))
	buf := &goaudio.IntBuffer{Data: make([]int, min(len(out), 1<<16))}
	for done := 0; done < len(out); {
		n, err := d.PCMBuffer(buf)
		if err != nil {
			return fmt.Errorf("decoding WAV: %w", err)
		}
		if n == 0 {
			break
		}
		n = min(n, len(out)-done)
		for i, v := range buf.Data[:n] {
			if h.bits == 8 {
				v -= 128 // 8-bit WAV is unsigned
			}
			out[done+i] = float32(v) * scale
		}
		done += n
	}
	return nil
}

// joined reads two byte slices as one file without copying them.
type joined struct {
	parts [2][]byte
	off   int64
}

func (j *joined) size() int64 { return int64(len(j.parts[0]) + len(j.parts[1])) }

func (j *joined) Read(p []byte) (int, error) {
	if j.off >= j.size() {
		return 0, io.EOF
	}
	var n int
	if h := int64(len(j.parts[0])); j.off < h {
		n = copy(p, j.parts[0][j.off:])
	} else {
		n = copy(p, j.parts[1][j.off-h:])
	}
	j.off += int64(n)
	return n, nil
}

func (j *joined) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += j.off
	case io.SeekEnd:
		offset += j.size()
	}
	if offset < 0 {
		return 0, errors.New("joined: negative position")
	}
	j.off = offset
	return offset, nil
}

// wavHeaderBytes is a canonical 44-byte WAV header.
func wavHeaderBytes(format, channels, rate, bits, dataLen int) []byte {
	le := binary.LittleEndian
	b := []byte("RIFF")
	b = le.AppendUint32(b, uint32(36+dataLen))
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, uint16(format))
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*channels*bits/8))
	b = le.AppendUint16(b, uint16(channels*bits/8))
	b = le.AppendUint16(b, uint16(bits))
	b = append(b, "data"...)
	return le.AppendUint32(b, uint32(dataLen))
}
