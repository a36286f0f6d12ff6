package gemma4

import (
	"perch/engine/prompt"
	"perch/media/logmel"
)

// Media is one attachment preprocessed into exactly what its tower takes
// (engine/gemma4/processor makes them; EncodeMedia runs them). Prepared
// media are cached and shared between requests: never change one.
type Media struct {
	Kind   prompt.PartType
	Key    string     // content hash + what was asked of it (the encoder cache's key too)
	Frames []*Patches // image: one; video: one per sampled frame
	Tokens []int      // soft tokens per frame
	Stamps []string   // video: "mm:ss" per frame
	Mel    *logmel.Features
	Wave   []float32 // audio for the unified embedder (16 kHz)
	// AudioTokens is an audio clip's placeholder count (mlx-vlm's rule).
	AudioTokens int
	Track       *Media // a video's sound, spliced after its frames
}
