package logmel

import "math"

// SoftTokens is the number of audio placeholder tokens, as mlx-vlm (and the
// fixtures) count them: min(ceil(samples/rate·1000 / msPerToken), maxTokens),
// evaluated in float64 in the same order as the Python, so the rare lengths
// where rounding adds a token (e.g. 257920 samples -> 404) agree too.
// Gemma-4: msPerToken 40 (audio_ms_per_token), maxTokens 750 (audio_seq_length).
func SoftTokens(samples, rate, msPerToken, maxTokens int) int {
	ms := float64(samples) / float64(rate) * 1000.0
	return min(int(math.Ceil(ms/float64(msPerToken))), maxTokens)
}

// EncoderFrames runs the conformer's two stride-2 subsampling convolutions
// (kernel 3, padding 1) over the mel frame mask: all encoder output rows, and
// the valid ones (current HF's placeholder count).
func EncoderFrames(mask []bool) (total, valid int) {
	m := mask
	for range 2 {
		t := (len(m)+2-3)/2 + 1
		next := make([]bool, 0, t)
		for i := 0; i < len(m) && len(next) < t; i += 2 {
			next = append(next, m[i])
		}
		m = next
	}
	for _, v := range m {
		if v {
			valid++
		}
	}
	return len(m), valid
}

// PlaceholderRows says which audio-tower output row fills each of `tokens`
// placeholders, the way mlx-vlm's masked_scatter does it: it scatters ALL
// encoder rows in order (invalid rows are zero vectors after the tower's
// output mask) and its source index wraps (i mod rows). So when SoftTokens
// exceeds the encoder's rows (e.g. 1.01 s: 26 placeholders, 26 rows of which
// 25 valid, the 26th a zero row), the extra placeholders take rows 0, 1, ….
func PlaceholderRows(tokens, encoderRows int) []int {
	out := make([]int, tokens)
	for i := range out {
		if encoderRows > 0 {
			out[i] = i % encoderRows
		}
	}
	return out
}

// UnifiedRows cuts samples into the unified (encoder-free) model's rows of
// perToken samples (audio_samples_per_token, 640 = 40 ms), zero-padding the
// last: [n][perToken], one row per soft token, all rows valid.
func UnifiedRows(samples []float32, perToken int) ([]float32, int) {
	n := (len(samples) + perToken - 1) / perToken
	rows := make([]float32, n*perToken)
	copy(rows, samples)
	return rows, n
}
