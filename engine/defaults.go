package engine

import (
	"perch/engine/gemma4/processor"
	"perch/engine/sample"
	"perch/media/video"
)

// DefaultMaxTokens is an answer's length when neither the request nor
// Options say.
const DefaultMaxTokens = 2048

// Defaults are what a model does with a request that leaves a setting out:
// generation_config.json's sampling, its processor's image budget, the
// video sampling and the answer length. Apps show them beside settings the
// user has not set, and send nothing for those.
type Defaults struct {
	// Sampling is what a request's Sampling (sample.Options) goes over:
	// Temperature 0 with Greedy, TopP and TopK 0 when off.
	Sampling    sample.Params
	Greedy      bool // do_sample false, or no generation_config.json
	ImageTokens int  // 0: the model cannot see
	VideoFPS    float64
	MaxFrames   int
	MaxTokens   int
}

// ImageBudgets are the image soft-token budgets a request may ask for.
func ImageBudgets() []int { return processor.ImageBudgets() }

// ReadDefaults reads the defaults of the model folder dir without loading it.
func ReadDefaults(dir string) (Defaults, error) {
	g, err := loadGenerationConfig(dir)
	if err != nil {
		return Defaults{}, err
	}
	v := video.Options{}.WithDefaults()
	d := Defaults{VideoFPS: v.FPS, MaxFrames: v.MaxFrames, MaxTokens: DefaultMaxTokens}
	if d.ImageTokens, err = processor.DefaultImageTokens(dir); err != nil {
		return Defaults{}, err
	}
	d.Sampling = samplingDefaults(g)
	d.Greedy = d.Sampling.Temperature == 0
	return d, nil
}

// samplingDefaults are generation_config's sampling (Gemma-4 ships 1.0 /
// 0.95 / 64); without a config, or with do_sample false, greedy.
func samplingDefaults(g *GenerationConfig) sample.Params {
	p := sample.Params{RepetitionContext: 20}
	if g.DoSample == nil || *g.DoSample {
		p = sample.Options{Temperature: g.Temperature, TopP: g.TopP, TopK: g.TopK}.Over(p)
	}
	return p
}
