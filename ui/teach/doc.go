// Package teach is the Teach page: the plan form (what to learn from, the
// method, the settings), the estimate and its refusals, the run going on
// with its loss chart (ui/chart) and controls, past runs, and the adapter
// library. It calls ui.Teacher and ui.Adapters off the UI goroutine and
// follows runs through Teacher.Watch.
package teach
