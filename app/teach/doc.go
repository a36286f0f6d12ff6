// Package teach is the app side of fine-tuning, the Teach page's
// service (ui.Teacher, ui.Adapters): it plans a run (Estimate: rows,
// memory, time), hands the plan's rows (package dataset) to the engine's
// trainer as rows (trainset.Example, attachments named by hash; no dataset
// file on the way), records the run durably in the history — its plan as
// versioned JSON, metrics, checkpoints, and the best saved state as the
// engine reports it (Teach never compares losses itself) — pauses,
// resumes, stops and continues it from a checkpoint, and keeps the
// library of adapters the user owns (a finished adapter is linked in,
// not read back; export writes the best checkpoint).
//
// Data flows one way: plan → dataset.Gather → Trainer (the engine) →
// events → history records → library.
package teach
