// Package library owns the adapters the user keeps: each one's files in
// <data>/adapters/<id>/ (mlx-lm's two files; best/ beside them when the
// run's best checkpoint is not its final adapter) and its record in the
// history database. It takes a finished run's adapter in by hard links
// (Keep: no byte read back), imports a folder the engine loads, exports
// the best checkpoint, renames and deletes. It implements ui.Adapters;
// package teach hands it each finished run.
package library
