package gemma4

import "strings"

// Checkpoint naming. Two layouts are published:
//
//   - mlx-community (mlx-vlm's converter): language_model.model.*,
//     vision_tower.*, vision_embedder.*, audio_tower.*, embed_vision.*,
//     embed_audio.*; MoE experts split into experts.switch_glu.{gate,up,
//     down}_proj; conv weights in MLX order ([O, kH, kW, I], [C, K, 1]).
//   - Hugging Face (google/*): the same under model.* (the language model
//     under model.language_model.*, or model.* for a text-only
//     Gemma4ForCausalLM); fused experts.gate_up_proj [E, 2I, H] and
//     experts.down_proj [E, H, I] without a .weight suffix; PyTorch conv
//     order ([O, I, kH, kW], [C, 1, K]).
//
// Each part is looked up under its candidate prefixes, so a checkpoint may
// mix them (sidecar files keep the towers under the mlx names).

// Layout is where one open checkpoint keeps each part, as found.
type Layout struct {
	Text           string // language model prefix
	Vision         string // SigLIP tower
	VisionEmbedder string // 12B encoder-free image embedder
	Audio          string // conformer
	EmbedVision    string // image projector into the text space
	EmbedAudio     string // audio projector
}

// The candidate prefixes of each part, mlx-community first.
var (
	textPrefixes  = []string{"language_model.model.", "model.language_model.", "model."}
	towerPrefixes = []string{"", "model."}
)

// Probe tensors that say a part is stored under a prefix.
const (
	probeText           = "embed_tokens.weight"
	probeVision         = "vision_tower.patch_embedder.input_proj.weight"
	probeVisionEmbedder = "vision_embedder.patch_dense.weight"
	probeAudio          = "embed_audio.embedding_projection.weight"
	probeEmbedVision    = "embed_vision.embedding_projection.weight"
)

// findLayout resolves each part's prefix with has; a part that is absent
// keeps its mlx-community prefix (the loader then names the tensor it
// missed).
func findLayout(has func(string) bool) Layout {
	l := Layout{Text: pick(has, textPrefixes, probeText)}
	tower := func(probe, part string) string {
		return pick(has, towerPrefixes, probe) + part
	}
	l.Vision = tower(probeVision, "vision_tower.")
	l.VisionEmbedder = tower(probeVisionEmbedder, "vision_embedder.")
	l.EmbedVision = tower(probeEmbedVision, "embed_vision.")
	l.EmbedAudio = tower(probeAudio, "embed_audio.")
	l.Audio = tower(probeAudio, "audio_tower.")
	return l
}

func pick(has func(string) bool, prefixes []string, probe string) string {
	for _, p := range prefixes {
		if has(p + probe) {
			return p
		}
	}
	return prefixes[0]
}

// Expert tensor names under a layer prefix p ("...layers.3.").
const (
	expertsSplit   = "experts.switch_glu." // + gate_proj/up_proj/down_proj (.weight, .scales, .biases)
	expertsGateUp  = "experts.gate_up_proj"
	expertsDownRaw = "experts.down_proj"
)

// Part names what a tensor belongs to, for the weight split of the fit
// check: "text", "vision" or "audio" (projectors count with their tower).
func Part(name string) string {
	rest := strings.TrimPrefix(name, "model.")
	for _, p := range []string{"vision_tower.", "vision_embedder.", "embed_vision."} {
		if strings.HasPrefix(rest, p) {
			return "vision"
		}
	}
	for _, p := range []string{"audio_tower.", "embed_audio."} {
		if strings.HasPrefix(rest, p) {
			return "audio"
		}
	}
	return "text"
}
