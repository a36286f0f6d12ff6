package look

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// MicIcon is a microphone drawn with fills only, so the theme can recolour it.
var MicIcon fyne.Resource = theme.NewThemedResource(fyne.NewStaticResource("mic.svg", []byte(
	`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">`+
		`<rect x="9" y="2.5" width="6" height="11.5" rx="3" fill="#000000"/>`+
		`<path d="M5 11a7 7 0 0 0 14 0h-2a5 5 0 0 1 -10 0z" fill="#000000"/>`+
		`<rect x="11" y="17.5" width="2" height="3" fill="#000000"/>`+
		`<rect x="8" y="20" width="8" height="2" rx="1" fill="#000000"/></svg>`)))

// SparkIcon marks the assistant's messages.
var SparkIcon fyne.Resource = theme.NewPrimaryThemedResource(fyne.NewStaticResource("spark.svg", []byte(
	`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">`+
		`<path d="M12 2l2.2 6.3L20.5 10.5l-6.3 2.2L12 19l-2.2-6.3L3.5 10.5l6.3-2.2z" fill="#000000"/>`+
		`<path d="M19 15l.9 2.1L22 18l-2.1.9L19 21l-.9-2.1L16 18l2.1-.9z" fill="#000000"/></svg>`)))
