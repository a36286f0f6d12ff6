package main

import "fmt"

// Token types of llama.cpp's vocabulary.
const (
	tokNormal  = 1
	tokUnknown = 2
	tokControl = 3
	tokUnused  = 5
	tokByte    = 6
)

// vocab is a SentencePiece-style ("llama") vocabulary of n tokens: <unk>,
// <s>, </s>, the 256 byte tokens, the printable ASCII characters with and
// without a leading "▁", then unused fillers, so that any text tokenizes
// (llama-perplexity) and the ids span the model's whole vocabulary.
func vocab(n int) []kv {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{tokUnknown, tokControl, tokControl}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, tokByte)
	}
	tokens = append(tokens, "▁")
	types = append(types, tokNormal)
	for c := '!'; c <= '~'; c++ {
		tokens = append(tokens, string(c), "▁"+string(c))
		types = append(types, tokNormal, tokNormal)
	}
	for i := len(tokens); i < n; i++ {
		tokens = append(tokens, fmt.Sprintf("<unused%d>", i))
		types = append(types, tokUnused)
	}
	tokens, types = tokens[:n], types[:n]
	scores := make([]float32, n)
	for i := range scores {
		scores[i] = -float32(i)
	}
	return []kv{
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
		{"tokenizer.ggml.add_bos_token", true},
	}
}
