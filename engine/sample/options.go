package sample

// Options are a request's sampling settings, the one form they take from
// the API that reads them (the local server's JSON, the CLI's flags, the
// chat's settings) to the sampler: a nil field keeps the model's default
// (Over). Temperature 0 is greedy.
type Options struct {
	Temperature       *float32
	TopP              *float32
	TopK              *int
	MinP              *float32
	RepetitionPenalty *float32
	Seed              *uint64
}

// Over is p with the settings o holds in place of p's.
func (o Options) Over(p Params) Params {
	set(&p.Temperature, o.Temperature)
	set(&p.TopP, o.TopP)
	set(&p.TopK, o.TopK)
	set(&p.MinP, o.MinP)
	set(&p.RepetitionPenalty, o.RepetitionPenalty)
	set(&p.Seed, o.Seed)
	return p
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
