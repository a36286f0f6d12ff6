// Package assets embeds Perch's icons. bird.svg is the source of the app
// icon; gen_icons.go renders icon.png (1024 px, for the bundle) and
// icon-256.png (the window icon) from it.
package assets

import (
	_ "embed"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

//go:embed icon-256.png
var iconPNG []byte

//go:embed tray.svg
var traySVG []byte

//go:embed tray-training.svg
var trayTrainingSVG []byte

// AppIcon is the window and Dock icon.
var AppIcon fyne.Resource = fyne.NewStaticResource("perch.png", iconPNG)

// TrayIcon is the menubar icon: a themed (template) silhouette that macOS
// and Linux panels tint to match light or dark menubars.
var TrayIcon fyne.Resource = theme.NewThemedResource(fyne.NewStaticResource("perch-tray.svg", traySVG))

// TrayTrainingIcon is the menubar icon while a fine-tuning run goes: the
// silhouette with a dot.
var TrayTrainingIcon fyne.Resource = theme.NewThemedResource(fyne.NewStaticResource("perch-tray-training.svg", trayTrainingSVG))
