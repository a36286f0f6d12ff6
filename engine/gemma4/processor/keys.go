package processor

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// processorIgnored are the keys of a published processor_config.json the
// processor does not read (processorConfig's tags are read), and why: the
// values are Gemma-4's fixed preprocessing, built into media/ (the
// published-key test checks that the published values are the built-in
// ones).
var processorIgnored = map[string]string{
	"processor_class":   "always Gemma4Processor",
	"image_seq_length":  "the image budget is image_processor.max_soft_tokens",
	"feature_extractor": "the USM log-mel front end is built in (media/logmel.Gemma4)",
	"video_processor":   "frames follow the engine's video sampling (2 fps, at most 32) through the image path",
	// image_processor's own keys besides max_soft_tokens:
	"image_processor.do_convert_rgb":       "images are always decoded to RGB",
	"image_processor.do_normalize":         "false in every release: pixels stay in [0, 1]",
	"image_processor.do_rescale":           "pixels are always scaled by 1/255",
	"image_processor.rescale_factor":       "1/255, built in",
	"image_processor.image_mean":           "[0, 0, 0] in every release (no normalisation)",
	"image_processor.image_std":            "[1, 1, 1] in every release (no normalisation)",
	"image_processor.do_resize":            "images are always resized to the patch grid the budget allows",
	"image_processor.resample":             "3 (bicubic), built into media/vision",
	"image_processor.size":                 "the target size follows the soft-token budget, not a fixed size",
	"image_processor.patch_size":           "vision_config.patch_size is used",
	"image_processor.pooling_kernel_size":  "vision_config.pooling_kernel_size is used",
	"image_processor.image_processor_type": "provenance",
	"image_processor.image_seq_length":     "the budget is max_soft_tokens",
}

// UnknownKeys lists the keys of a processor_config.json that the
// processor neither reads nor knowingly builds in.
func UnknownKeys(data []byte) ([]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	read := map[string]bool{}
	t := reflect.TypeOf(processorConfig{})
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		read[name] = true
	}
	var out []string
	for k, v := range top {
		if k == "image_processor" {
			var img map[string]json.RawMessage
			json.Unmarshal(v, &img)
			for ik := range img {
				if ik != "max_soft_tokens" && processorIgnored["image_processor."+ik] == "" {
					out = append(out, "image_processor."+ik)
				}
			}
			continue
		}
		if !read[k] && processorIgnored[k] == "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}
