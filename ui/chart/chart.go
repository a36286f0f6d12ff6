package chart

import (
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"perch/ui/look"
)

// A line chart on Fyne's own canvas: the curves are rasterized into a
// canvas.Raster at the screen's pixel size (anti-aliased, golang.org/x/image/vector),
// axis labels are theme text. Every point is kept; drawing decimates to at
// most four points per pixel column, which draws the same picture as the
// whole polyline (see decimate).

// ChartSeries is one line of a chart.
type ChartSeries struct {
	Name  string
	Color fyne.ThemeColorName
	// Dots marks each point (sparse series such as validation loss).
	Dots bool
	// Smooth, in (0, 1), overlays an exponential moving average with this
	// weight (TensorBoard's, debiased) and draws the raw line faint.
	Smooth float64

	xs, ys []float64
	sm     []float64 // smoothed ys, when Smooth > 0
	emaAcc float64
	emaW   float64
}

func (s *ChartSeries) add(x, y float64) {
	s.xs = append(s.xs, x)
	s.ys = append(s.ys, y)
	if s.Smooth > 0 {
		s.emaAcc = s.Smooth*s.emaAcc + (1-s.Smooth)*y
		s.emaW = s.Smooth*s.emaW + (1 - s.Smooth)
		s.sm = append(s.sm, s.emaAcc/s.emaW)
	}
}

// LineChart plots series against a step axis.
type LineChart struct {
	widget.BaseWidget
	Title string
	// XMax is where the x axis ends at least (a run's total steps), so the
	// chart does not rescale as points arrive.
	XMax   float64
	series []*ChartSeries
	hover  float64        // x under the pointer; NaN when none
	R      *chartRenderer // the renderer Fyne made, for hit tests
}

func NewLineChart(title string, series ...*ChartSeries) *LineChart {
	c := &LineChart{Title: title, series: series, hover: math.NaN()}
	c.ExtendBaseWidget(c)
	return c
}

// Add appends a point to series i; points that are not finite are dropped
// (a diverged loss is reported elsewhere, not drawn off the chart).
func (c *LineChart) Add(i int, x, y float64) {
	if i < 0 || i >= len(c.series) || !finite(x) || !finite(y) {
		return
	}
	c.series[i].add(x, y)
}

// Len is the number of points series i holds.
func (c *LineChart) Len(i int) int { return len(c.series[i].xs) }

// Reset drops every point.
func (c *LineChart) Reset() {
	for _, s := range c.series {
		*s = ChartSeries{Name: s.Name, Color: s.Color, Dots: s.Dots, Smooth: s.Smooth}
	}
	c.Refresh()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// CreateRenderer implements fyne.Widget.
func (c *LineChart) CreateRenderer() fyne.WidgetRenderer {
	r := &chartRenderer{c: c}
	r.title = canvas.NewText(c.Title, theme.Color(theme.ColorNameForeground))
	r.title.TextStyle.Bold = true
	r.readout = canvas.NewText("", theme.Color(theme.ColorNamePlaceHolder))
	r.readout.TextSize = theme.Size(theme.SizeNameCaptionText)
	r.readout.Alignment = fyne.TextAlignTrailing
	r.empty = canvas.NewText("Waiting for the first step…", theme.Color(theme.ColorNamePlaceHolder))
	r.empty.Alignment = fyne.TextAlignCenter
	for _, s := range c.series {
		sw := canvas.NewRectangle(look.ThemeColor(s.Color))
		t := canvas.NewText(s.Name, theme.Color(theme.ColorNameForeground))
		t.TextSize = theme.Size(theme.SizeNameCaptionText)
		r.Legend = append(r.Legend, legendItem{sw, t})
	}
	r.raster = canvas.NewRaster(r.draw)
	c.R = r
	return r
}

type legendItem struct {
	swatch *canvas.Rectangle
	Text   *canvas.Text
}

// chartView is what is on screen: the data ranges and the ticks.
type chartView struct {
	x0, x1, y0, y1 float64
	xTicks, yTicks []float64
	yStep          float64
}

func (c *LineChart) view() (chartView, bool) {
	v := chartView{x0: 0, x1: c.XMax, y0: math.Inf(1), y1: math.Inf(-1)}
	any := false
	for _, s := range c.series {
		for i, x := range s.xs {
			any = true
			v.x1 = math.Max(v.x1, x)
			v.y0, v.y1 = math.Min(v.y0, s.ys[i]), math.Max(v.y1, s.ys[i])
		}
	}
	if !any {
		return v, false
	}
	if v.x1 <= v.x0 {
		v.x1 = v.x0 + 1
	}
	pad := (v.y1 - v.y0) * 0.08
	if pad == 0 {
		pad = math.Max(math.Abs(v.y0)*0.1, 0.5)
	}
	v.y0, v.y1 = v.y0-pad, v.y1+pad
	if v.y0 < 0 && c.allNonNegative() {
		v.y0 = 0 // losses: the axis does not dip below zero for padding
	}
	v.yTicks, v.yStep = niceTicks(v.y0, v.y1, 5)
	v.xTicks, _ = niceTicks(v.x0, v.x1, 6)
	return v, true
}

func (c *LineChart) allNonNegative() bool {
	for _, s := range c.series {
		for _, y := range s.ys {
			if y < 0 {
				return false
			}
		}
	}
	return true
}

// niceTicks returns about n round values (1, 2, 5 × 10^k apart) inside [lo, hi].
func niceTicks(lo, hi float64, n int) ([]float64, float64) {
	span := hi - lo
	if !(span > 0) || n < 1 {
		return nil, 0
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	var step float64
	switch f := raw / mag; {
	case f < 1.5:
		step = mag
	case f < 3:
		step = 2 * mag
	case f < 7:
		step = 5 * mag
	default:
		step = 10 * mag
	}
	var ticks []float64
	for t := math.Ceil(lo/step) * step; t <= hi+step*1e-9 && len(ticks) < 50; t += step {
		if math.Abs(t) < step*1e-9 {
			t = 0
		}
		ticks = append(ticks, t)
	}
	return ticks, step
}

// seriesColor is a series' colour, faded for the raw line under a smoothed one.
func seriesColor(name fyne.ThemeColorName, faint bool) color.NRGBA {
	r, g, b, _ := look.ThemeColor(name).RGBA()
	c := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0xff}
	if faint {
		c.A = 0x55
	}
	return c
}
