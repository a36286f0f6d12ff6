package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"perch/engine/tensor"
)

// silentWAV is a valid 16 kHz mono WAV with n samples.
func silentWAV(n int) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+2*n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(16000), uint32(32000), uint16(2), uint16(16)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(2*n))
	b.Write(make([]byte, 2*n))
	return b.Bytes()
}

// activeMemory is the backend's active memory once the reusable state (the
// prefix session and the encoder cache) is dropped.
func activeMemory(t *testing.T, e *Engine) int64 {
	t.Helper()
	var n int64
	err := e.onEngine(func(b tensor.Backend) {
		e.sess.drop(b)
		e.encCache.Clear()
		b.Sweep()
		n = b.ActiveMemory()
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBadInputsKeepServing: each bad request gets a clear error, the engine
// answers the next request normally, and (on MLX, which owns native memory)
// active memory is back at its baseline.
func TestBadInputsKeepServing(t *testing.T) {
	for _, backend := range testBackends() {
		t.Run(backend, func(t *testing.T) {
			e := openTiny(t, "text-tiny", Options{Backend: backend, MaxContext: 256})
			img := media(t, "vision-tiny", "image.png")
			good := imageRequest(t, []int32{2, 123, 1016, 270}, img)
			run(t, e, good) // warm up: allocator caches, lazily built tables
			base := activeMemory(t, e)

			bad := []struct {
				name, want string
				req        Request
			}{
				{"undecodable image", "png", imageRequest(t, []int32{2, 1016}, img[:200])},
				{"not an image", "unsupported", imageRequest(t, []int32{2, 1016}, []byte("hello, not a picture at all"))},
				{"empty audio", "empty", Request{PromptIDs: []int32{2, 1017}, Messages: []Message{{Role: RoleUser, Content: []Part{{Type: PartAudio, Data: silentWAV(0)}}}}}},
				{"more markers than media", "placeholders", imageRequest(t, []int32{2, 1016, 5, 1016}, img)},
				{"more media than markers", "placeholders", imageRequest(t, []int32{2, 5}, img)},
				{"prompt over the context", "context", Request{PromptIDs: make([]int32, 300)}},
			}
			for _, c := range bad {
				_, err := e.Generate(context.Background(), c.req)
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), c.want) {
					t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
				}
			}
			got, _ := run(t, e, good)
			if len(got) == 0 {
				t.Fatal("the engine stopped answering after bad inputs")
			}
			if backend != BackendMLX {
				return // Go tensors belong to the garbage collector
			}
			if after := activeMemory(t, e); after != base {
				t.Errorf("active memory %d after bad inputs and a generation, baseline %d", after, base)
			}
		})
	}
}

// TestMLXMemoryBaseline: MLX's active memory returns to its baseline after
// generations, sampled and greedy, and after a cancelled one (no array
// leaks across requests).
func TestMLXMemoryBaseline(t *testing.T) {
	if !slices.Contains(testBackends(), BackendMLX) {
		t.Skip("libmlxc not found: MLX memory test skipped")
	}
	e := openTiny(t, "text-tiny", Options{Backend: BackendMLX})
	img := media(t, "vision-tiny", "image.png")
	sampled := Request{PromptIDs: []int32{2, 485, 494, 539}, MaxTokens: 40, IgnoreEOS: true}
	greedy := sampled
	greedy.Sampling = Sampling{Temperature: f32(0)}
	// round runs each kind of request, reporting active memory after each.
	round := func(check func(what string, got int64)) {
		run(t, e, sampled)
		check("a sampled generation", activeMemory(t, e))
		run(t, e, greedy)
		check("a greedy generation", activeMemory(t, e))
		cancelAfter(t, e, 5)
		check("a cancelled generation", activeMemory(t, e))
	}
	// Warm up: MLX keeps what it builds on first use.
	run(t, e, imageRequest(t, []int32{2, 123, 1016, 270}, img))
	round(func(string, int64) {})
	base := activeMemory(t, e)
	round(func(what string, got int64) {
		if got != base {
			t.Errorf("after %s: active memory %d, baseline %d", what, got, base)
		}
	})
}
