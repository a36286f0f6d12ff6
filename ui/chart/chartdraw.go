package chart

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"golang.org/x/image/vector"

	"perch/ui/look"
)

// chartRenderer lays out the title, legend and axis labels, and draws the
// grid and curves into one raster.
type chartRenderer struct {
	c       *LineChart
	title   *canvas.Text
	readout *canvas.Text // the values under the pointer
	empty   *canvas.Text
	Legend  []legendItem
	raster  *canvas.Raster
	xLabels []*canvas.Text
	yLabels []*canvas.Text

	size fyne.Size
	plot fyne.Position // top-left of the plot area
	pw   float32       // plot area width and height
	ph   float32
	v    chartView
	ok   bool // there is data to draw
}

const (
	chartTop    = 26 // title and legend row
	chartBottom = 20 // x labels
	chartRight  = 12
)

func (r *chartRenderer) Destroy() {}

func (r *chartRenderer) MinSize() fyne.Size { return fyne.NewSize(180, 180) }

func (r *chartRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.raster, r.title, r.readout, r.empty}
	for _, l := range r.Legend {
		objs = append(objs, l.swatch, l.Text)
	}
	for _, t := range r.xLabels {
		objs = append(objs, t)
	}
	for _, t := range r.yLabels {
		objs = append(objs, t)
	}
	return objs
}

func (r *chartRenderer) Refresh() {
	r.Layout(r.size)
	r.raster.Refresh()
	r.title.Refresh()
}

func (r *chartRenderer) Layout(size fyne.Size) {
	r.size = size
	r.v, r.ok = r.c.view()
	caption := theme.Size(theme.SizeNameCaptionText)
	muted := theme.Color(theme.ColorNamePlaceHolder)
	r.yLabels = labels(r.yLabels, len(r.v.yTicks), caption, muted)
	r.xLabels = labels(r.xLabels, len(r.v.xTicks), caption, muted)
	left := float32(24)
	for i, t := range r.v.yTicks {
		r.yLabels[i].Text = formatTick(t, r.v.yStep)
		left = max(left, fyne.MeasureText(r.yLabels[i].Text, caption, fyne.TextStyle{}).Width+10)
	}
	r.plot = fyne.NewPos(left, chartTop)
	r.pw = max(size.Width-left-chartRight, 1)
	r.ph = max(size.Height-chartTop-chartBottom, 1)

	r.raster.Move(fyne.NewPos(0, 0))
	r.raster.Resize(size)
	r.title.Move(fyne.NewPos(0, 2))
	x := r.title.MinSize().Width + 16
	for _, l := range r.Legend {
		// A series is named once it has a point: a run without validation
		// rows shows no "Validation" entry for a line that never comes.
		if len(r.seriesOf(l).xs) == 0 {
			l.swatch.Hide()
			l.Text.Hide()
			continue
		}
		l.swatch.Show()
		l.Text.Show()
		l.swatch.FillColor = look.ThemeColor(r.seriesOf(l).Color)
		l.swatch.Resize(fyne.NewSize(14, 3))
		l.swatch.Move(fyne.NewPos(x, 12))
		l.Text.Move(fyne.NewPos(x+18, 5))
		x += 18 + l.Text.MinSize().Width + 14
	}
	r.readout.Move(fyne.NewPos(size.Width-chartRight, 5))
	for i, t := range r.v.yTicks {
		l := r.yLabels[i]
		s := l.MinSize()
		l.Move(fyne.NewPos(left-6-s.Width, r.py(t)-s.Height/2))
	}
	for i, t := range r.v.xTicks {
		l := r.xLabels[i]
		l.Text = formatTick(t, 1)
		s := l.MinSize()
		l.Move(fyne.NewPos(min(max(r.px(t)-s.Width/2, left), size.Width-s.Width), r.plot.Y+r.ph+3))
	}
	r.empty.Move(fyne.NewPos(r.plot.X+r.pw/2, r.plot.Y+r.ph/2-10))
	if r.ok {
		r.empty.Hide()
	} else {
		r.empty.Show()
	}
	r.readout.Text = r.readoutText()
	r.readout.Refresh()
}

func (r *chartRenderer) seriesOf(l legendItem) *ChartSeries {
	for i, li := range r.Legend {
		if li == l {
			return r.c.series[i]
		}
	}
	return r.c.series[0]
}

func labels(have []*canvas.Text, n int, size float32, c color.Color) []*canvas.Text {
	for len(have) < n {
		t := canvas.NewText("", c)
		t.TextSize = size
		have = append(have, t)
	}
	for _, t := range have[n:] {
		t.Text = ""
	}
	return have[:n]
}

// formatTick prints a tick with as many decimals as its step needs.
func formatTick(v, step float64) string {
	if step >= 1 || step <= 0 {
		if math.Abs(v) >= 10000 {
			return fmt.Sprintf("%.0fk", v/1000)
		}
		return fmt.Sprintf("%.0f", v)
	}
	d := int(math.Ceil(-math.Log10(step)))
	return fmt.Sprintf("%.*f", d, v)
}

// px and py map data to positions in the widget (units).
func (r *chartRenderer) px(x float64) float32 {
	return r.plot.X + float32((x-r.v.x0)/(r.v.x1-r.v.x0))*r.pw
}

func (r *chartRenderer) py(y float64) float32 {
	return r.plot.Y + r.ph - float32((y-r.v.y0)/(r.v.y1-r.v.y0))*r.ph
}

// draw renders grid and curves at w×h pixels.
func (r *chartRenderer) draw(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	if w < 2 || h < 2 || r.size.Width <= 0 {
		return img
	}
	s := float32(w) / r.size.Width
	z := vector.NewRasterizer(w, h)
	grid := seriesColor(theme.ColorNameSeparator, false)
	for _, t := range r.v.yTicks {
		y := r.py(t) * s
		fillRect(z, img, r.plot.X*s, y-0.5*s, (r.plot.X+r.pw)*s, y+0.5*s, grid)
	}
	axis := seriesColor(theme.ColorNamePlaceHolder, false)
	base := (r.plot.Y + r.ph) * s
	fillRect(z, img, r.plot.X*s, base-0.6*s, (r.plot.X+r.pw)*s, base+0.6*s, axis)
	if !r.ok {
		return img
	}
	cols := int(r.pw * s)
	for _, sr := range r.c.series {
		if len(sr.xs) == 0 {
			continue
		}
		main := sr.ys
		if sr.Smooth > 0 {
			r.stroke(z, img, sr.xs, sr.ys, cols, s, 1.2*s, seriesColor(sr.Color, true))
			main = sr.sm
		}
		r.stroke(z, img, sr.xs, main, cols, s, 2*s, seriesColor(sr.Color, false))
		if sr.Dots {
			c := seriesColor(sr.Color, false)
			for i := range sr.xs {
				x, y := r.px(sr.xs[i])*s, r.py(sr.ys[i])*s
				fillRect(z, img, x-2.5*s, y-2.5*s, x+2.5*s, y+2.5*s, c)
			}
		}
	}
	if h := r.c.hover; !math.IsNaN(h) {
		x := r.px(h) * s
		fillRect(z, img, x-0.5*s, r.plot.Y*s, x+0.5*s, base, axis)
	}
	return img
}

// stroke draws the polyline (xs, ys), decimated to the plot's pixel columns.
func (r *chartRenderer) stroke(z *vector.Rasterizer, img *image.RGBA, xs, ys []float64, cols int, s, width float32, c color.NRGBA) {
	dx, dy := decimate(xs, ys, r.v.x0, r.v.x1, cols)
	z.Reset(img.Bounds().Dx(), img.Bounds().Dy())
	if len(dx) == 1 {
		x, y := r.px(dx[0])*s, r.py(dy[0])*s
		rectPath(z, x-width, y-width, x+width, y+width)
	}
	for i := 1; i < len(dx); i++ {
		strokeSegment(z, r.px(dx[i-1])*s, r.py(dy[i-1])*s, r.px(dx[i])*s, r.py(dy[i])*s, width)
	}
	z.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{})
}

// strokeSegment adds a quad of the given width around a→b, extended by half the
// width at both ends so consecutive segments join without gaps.
func strokeSegment(z *vector.Rasterizer, ax, ay, bx, by, width float32) {
	dx, dy := bx-ax, by-ay
	l := float32(math.Hypot(float64(dx), float64(dy)))
	if l < 1e-3 {
		rectPath(z, ax-width/2, ay-width/2, ax+width/2, ay+width/2)
		return
	}
	ux, uy := dx/l*width/2, dy/l*width/2 // along the segment, half width
	ax, ay, bx, by = ax-ux, ay-uy, bx+ux, by+uy
	z.MoveTo(ax-uy, ay+ux)
	z.LineTo(bx-uy, by+ux)
	z.LineTo(bx+uy, by-ux)
	z.LineTo(ax+uy, ay-ux)
	z.ClosePath()
}

func rectPath(z *vector.Rasterizer, x0, y0, x1, y1 float32) {
	z.MoveTo(x0, y0)
	z.LineTo(x1, y0)
	z.LineTo(x1, y1)
	z.LineTo(x0, y1)
	z.ClosePath()
}

func fillRect(z *vector.Rasterizer, img draw.Image, x0, y0, x1, y1 float32, c color.NRGBA) {
	z.Reset(img.Bounds().Dx(), img.Bounds().Dy())
	rectPath(z, x0, y0, x1, y1)
	z.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{})
}

// decimate keeps, for each of cols equal columns of [x0, x1], the first,
// lowest, highest and last point in x order (M4 aggregation): a polyline
// through them covers the same pixels as one through every point. xs must
// be non-decreasing; the output has at most 4·cols points.
func decimate(xs, ys []float64, x0, x1 float64, cols int) ([]float64, []float64) {
	if cols < 1 || len(xs) <= 4*cols || x1 <= x0 {
		return xs, ys
	}
	ox, oy := make([]float64, 0, 4*cols), make([]float64, 0, 4*cols)
	col := func(x float64) int {
		return min(max(int((x-x0)/(x1-x0)*float64(cols)), 0), cols-1)
	}
	for i := 0; i < len(xs); {
		c := col(xs[i])
		first, lo, hi, last := i, i, i, i
		for i < len(xs) && col(xs[i]) == c {
			if ys[i] < ys[lo] {
				lo = i
			}
			if ys[i] > ys[hi] {
				hi = i
			}
			last = i
			i++
		}
		keep := []int{first, lo, hi, last}
		if lo > hi {
			keep[1], keep[2] = hi, lo
		}
		prev := -1
		for _, k := range keep {
			if k != prev {
				ox, oy = append(ox, xs[k]), append(oy, ys[k])
				prev = k
			}
		}
	}
	return ox, oy
}

// readoutText is the values of each series at the step under the pointer.
func (r *chartRenderer) readoutText() string {
	h := r.c.hover
	if math.IsNaN(h) || !r.ok {
		return ""
	}
	parts := []string{fmt.Sprintf("step %.0f", h)}
	for _, s := range r.c.series {
		i := nearest(s.xs, h)
		if i < 0 {
			continue
		}
		y := s.ys[i]
		if s.Smooth > 0 {
			y = s.sm[i]
		}
		parts = append(parts, fmt.Sprintf("%s %.4g", strings.ToLower(s.Name), y))
	}
	return strings.Join(parts, " · ")
}

// nearest is the index of the x closest to v in sorted xs (-1 if empty).
func nearest(xs []float64, v float64) int {
	lo, hi := 0, len(xs)
	for lo < hi {
		m := (lo + hi) / 2
		if xs[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	switch {
	case len(xs) == 0:
		return -1
	case lo == len(xs):
		return lo - 1
	case lo > 0 && v-xs[lo-1] < xs[lo]-v:
		return lo - 1
	}
	return lo
}

var _ desktop.Hoverable = (*LineChart)(nil)

// MouseIn implements desktop.Hoverable.
func (c *LineChart) MouseIn(e *desktop.MouseEvent) { c.MouseMoved(e) }

// MouseMoved shows the values at the step under the pointer.
func (c *LineChart) MouseMoved(e *desktop.MouseEvent) {
	r := c.R
	if r == nil || !r.ok {
		return
	}
	f := (float64(e.Position.X) - float64(r.plot.X)) / float64(r.pw)
	if f < 0 || f > 1 {
		c.MouseOut()
		return
	}
	c.hover = math.Round(r.v.x0 + f*(r.v.x1-r.v.x0))
	c.Refresh()
}

// MouseOut implements desktop.Hoverable.
func (c *LineChart) MouseOut() {
	c.hover = math.NaN()
	c.Refresh()
}
