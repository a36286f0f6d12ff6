package mic

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/gen2brain/malgo"

	"perch/media/audio"
)

func floatBytes(s []float32) []byte {
	b := make([]byte, 0, 4*len(s))
	for _, v := range s {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// The null device (no hardware) delivers silence in real time: the recorder
// runs, the meter ticks, and the silent clip is refused with the permission hint.
func TestNullDeviceIsReportedAsNoInput(t *testing.T) {
	r, err := Start(Options{Backends: []malgo.Backend{NullBackend}})
	if err != nil {
		t.Skipf("null audio device unavailable: %v", err)
	}
	var levels int
	deadline := time.After(400 * time.Millisecond)
loop:
	for {
		select {
		case l := <-r.Levels():
			if l != 0 {
				t.Errorf("null device level %v", l)
			}
			levels++
		case <-deadline:
			break loop
		}
	}
	_, err = r.Stop()
	if !errors.Is(err, ErrNoInput) {
		t.Fatalf("want ErrNoInput, got %v", err)
	}
	if levels == 0 {
		t.Error("no level readings in 400 ms")
	}
	t.Logf("%d level readings; error: %v", levels, err)
}

func TestMissingDevice(t *testing.T) {
	// JACK is not running on a test machine: opening must fail with a clear error.
	_, err := Start(Options{Backends: []malgo.Backend{malgo.BackendJack}})
	if !errors.Is(err, ErrNoDevice) {
		t.Fatalf("want ErrNoDevice, got %v", err)
	}
}

// A 48 kHz stereo capture becomes 16 kHz mono, capped at MaxSeconds, and
// its WAV decodes back to the same clip.
func TestConversionCapAndWAV(t *testing.T) {
	const rate = 48000
	b := newBuffer(rate, 2, 1.0)
	chunk := make([]float32, 2*480) // 10 ms stereo
	for i := 0; i < 150; i++ {      // 1.5 s offered
		for j := 0; j < 480; j++ {
			v := float32(0.5 * math.Sin(2*math.Pi*1000*float64(i*480+j)/rate))
			chunk[2*j], chunk[2*j+1] = v, v
		}
		b.add(floatBytes(chunk))
	}
	select {
	case <-b.full:
	default:
		t.Fatal("cap not signalled")
	}
	if l := <-b.levels; math.Abs(float64(l)-0.5/math.Sqrt2) > 0.01 {
		t.Errorf("level %v, want the sine's RMS 0.354", l)
	}
	c, err := b.finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Samples) != 16000 || !c.Capped || c.DeviceRate != rate || c.Channels != 2 {
		t.Fatalf("%d samples, capped %v", len(c.Samples), c.Capped)
	}
	wav, err := c.WAV()
	if err != nil {
		t.Fatal(err)
	}
	a, err := audio.Decode(context.Background(), wav, audio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range a.Clips[0] {
		if math.Abs(float64(v-c.Samples[i])) > 1.0/32768 {
			t.Fatalf("sample %d: %v vs %v", i, v, c.Samples[i])
		}
	}
}
