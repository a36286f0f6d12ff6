//go:build ignore

// Renders the app icon PNGs from bird.svg with Fyne's own SVG renderer:
//
//	go run gen_icons.go
package main

import (
	"image/png"
	"log"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/software"
	"fyne.io/fyne/v2/test"
)

func main() {
	test.NewApp()
	svg, err := os.ReadFile("bird.svg")
	if err != nil {
		log.Fatal(err)
	}
	for name, size := range map[string]float32{"icon.png": 1024, "icon-256.png": 256} {
		img := canvas.NewImageFromResource(fyne.NewStaticResource("bird.svg", svg))
		c := software.NewTransparentCanvas()
		c.SetContent(img)
		c.SetPadded(false)
		c.Resize(fyne.NewSquareSize(size))
		f, err := os.Create(name)
		if err != nil {
			log.Fatal(err)
		}
		if err := png.Encode(f, c.Capture()); err != nil {
			log.Fatal(err)
		}
		f.Close()
	}
}
