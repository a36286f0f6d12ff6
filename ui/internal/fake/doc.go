// Package fake holds in-memory stand-ins for the ports in package ui (a
// chat that answers from scripts, a model, a catalog, a recorder, Teach's
// services) and Loop, which plays Fyne's UI goroutine, for the views'
// tests. Tests drive a view and read what the fakes were asked.
package fake
