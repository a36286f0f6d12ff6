package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"perch/engine/lora"
	"perch/engine/train"
	"perch/engine/trainset"
)

// settings are the request's run settings as a saved state records them;
// start is the adapter the run began from (nil: a new one of req.LoRA).
func (req *TrainRequest) settings(start *lora.Adapter) *train.Settings {
	cfg := req.LoRA
	if start != nil {
		cfg = start.Config
	}
	return &train.Settings{Options: req.Options, LoRA: cfg, MaxLen: req.MaxLen, Iters: req.Iters, BatchSize: req.BatchSize,
		ValEvery: req.ValEvery, ValBtchs: req.ValBatches, SaveEvery: req.SaveEvery, NoShuffle: req.NoShuffle}
}

// prepareContinue reads the state req.Continue holds and checks the request
// repeats the run's settings. A checkpoint folder (DIR/checkpoints/step-…)
// continues the run of DIR from that checkpoint.
func (e *Engine) prepareContinue(req *TrainRequest, plan train.Plan, notes []string) (train.Plan, *lora.Adapter, []string, error) {
	dir := filepath.Clean(req.Continue)
	st, err := train.ReadState(dir)
	if err != nil {
		return plan, nil, nil, fmt.Errorf("%w (to start a new run from an adapter, use --resume-adapter)", err)
	}
	if filepath.Base(filepath.Dir(dir)) == "checkpoints" {
		dir = filepath.Dir(filepath.Dir(dir))
	}
	req.AdapterDir, plan.AdapterDir = dir, dir
	if _, _, err := st.Adapter.Match(e.model.Text); err != nil {
		return plan, nil, nil, fmt.Errorf("the run in %s does not fit this model: %w", dir, err)
	}
	var start *lora.Adapter
	if req.Resume != "" {
		start = &lora.Adapter{Config: st.Settings.LoRA} // the run's adapter came from there; its config is the one saved
	}
	want := req.settings(start)
	if start == nil && req.LoRA.FineTuneType == "" { // a caller that leaves the adapter's shape to the run
		want.LoRA = st.Settings.LoRA
	}
	if d := st.Settings.Differences(*want); len(d) > 0 {
		return plan, nil, nil, fmt.Errorf("continue the run in %s with the settings it was started with; these differ: %s", dir, strings.Join(d, "; "))
	}
	plan.Settings, plan.Resume = want, st
	notes = append(notes, fmt.Sprintf("continuing the run in %s after step %d of %d", dir, st.Step, req.Iters))
	return plan, st.Adapter, notes, nil
}

// encodeExamples is the request's examples as a dataset: the training
// rows and, when given, the validation rows.
func encodeExamples(ctx context.Context, req *TrainRequest, enc *trainset.Encoder) (*trainset.Dataset, error) {
	budget := trainset.MaxDatasetTokens
	ds := &trainset.Dataset{}
	var err error
	if ds.Train, err = trainset.EncodeExamples(ctx, "training rows", req.Examples, enc, &budget); err != nil {
		return nil, err
	}
	if len(req.ValidExamples) > 0 {
		if ds.Valid, err = trainset.EncodeExamples(ctx, "validation rows", req.ValidExamples, enc, &budget); err != nil {
			return nil, err
		}
	}
	return ds, nil
}
