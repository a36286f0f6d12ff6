// Package train holds the perch train verbs: fine-tune a LoRA adapter from
// a dataset folder (cmd_train*.go: flags, --config files, mlx-lm's
// parameters, printing the run's events), watch a run's metrics (train
// watch) and fuse an adapter into its base model (train fuse). It turns
// flags into an engine.TrainRequest and prints the run's events; the
// training itself is the engine's. It registers into cli.Verbs from init.
package train
