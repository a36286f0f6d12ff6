// Package cli holds Perch's command-line verbs (ask, chat, serve, train,
// models, media, gui, quick-ask), one file each: a verb is a cmd_*.go file
// whose init calls Register, so adding one touches nothing else. Package
// main dispatches to the Verbs table. Verbs open engines through package
// engines (the same defaults as the GUI and the local API), start the GUI
// through package desktop, and print; they hold no state between runs.
package cli
