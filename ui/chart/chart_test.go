package chart

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"perch/ui/look"
)

func TestDecimateKeepsEveryColumnsExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 20000
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
		ys[i] = math.Exp(-float64(i)/4000) + rng.NormFloat64()*0.05
	}
	cols := 300
	dx, dy := decimate(xs, ys, 0, float64(n), cols)
	if len(dx) > 4*cols || len(dx) < cols {
		t.Fatalf("%d points for %d columns", len(dx), cols)
	}
	// Per column, the decimated min and max equal the full data's.
	type mm struct{ lo, hi float64 }
	colOf := func(x float64) int { return min(int(x/float64(n)*float64(cols)), cols-1) }
	full, got := map[int]mm{}, map[int]mm{}
	acc := func(m map[int]mm, x, y float64) {
		c := colOf(x)
		v, ok := m[c]
		if !ok {
			v = mm{y, y}
		}
		m[c] = mm{math.Min(v.lo, y), math.Max(v.hi, y)}
	}
	for i := range xs {
		acc(full, xs[i], ys[i])
	}
	for i := range dx {
		acc(got, dx[i], dy[i])
		if i > 0 && dx[i] < dx[i-1] {
			t.Fatalf("x order broken at %d", i)
		}
	}
	for c, v := range full {
		if got[c] != v {
			t.Fatalf("column %d: got %v, full data %v", c, got[c], v)
		}
	}
	if dx[0] != 0 || dx[len(dx)-1] != float64(n-1) {
		t.Fatal("first or last point lost")
	}
	// Few points are drawn as they are.
	sx, _ := decimate(xs[:50], ys[:50], 0, 50, cols)
	if len(sx) != 50 {
		t.Fatalf("small input changed: %d points", len(sx))
	}
}

func TestNiceTicks(t *testing.T) {
	ticks, step := niceTicks(0.13, 2.71, 5)
	if step != 0.5 || ticks[0] != 0.5 || ticks[len(ticks)-1] != 2.5 {
		t.Fatalf("ticks %v step %v", ticks, step)
	}
	if ts, _ := niceTicks(0, 1000, 6); len(ts) != 6 || ts[1] != 200 {
		t.Fatalf("x ticks %v", ts)
	}
	if ts, _ := niceTicks(1, 1, 5); ts != nil {
		t.Fatalf("empty span gave %v", ts)
	}
}

// countColour counts pixels close to c in img.
func countColour(img image.Image, c fyne.ThemeColorName) int {
	want := seriesColor(c, false)
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if absDiff(r>>8, uint32(want.R)) < 24 && absDiff(g>>8, uint32(want.G)) < 24 && absDiff(bl>>8, uint32(want.B)) < 24 {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestChartDrawsThousandsOfPoints(t *testing.T) {
	a := test.NewTempApp(t)
	a.Settings().SetTheme(look.NewTheme())
	c := NewLineChart("Loss", &ChartSeries{Name: "Training", Color: theme.ColorNamePrimary, Smooth: 0.9},
		&ChartSeries{Name: "Validation", Color: theme.ColorNameWarning, Dots: true})
	c.XMax = 5000
	w := a.NewWindow("chart")
	w.SetContent(c)
	w.Resize(fyne.NewSize(600, 300))
	before := countColour(w.Canvas().Capture(), theme.ColorNamePrimary)
	for i := 1; i <= 5000; i++ {
		c.Add(0, float64(i), 3*math.Exp(-float64(i)/1500)+0.1*math.Sin(float64(i)))
		if i%500 == 0 {
			c.Add(1, float64(i), 3*math.Exp(-float64(i)/1500)+0.2)
		}
	}
	c.Add(0, 5001, math.NaN()) // dropped
	c.Refresh()
	if c.Len(0) != 5000 || c.Len(1) != 10 {
		t.Fatalf("kept %d and %d points", c.Len(0), c.Len(1))
	}
	img := w.Canvas().Capture()
	if n := countColour(img, theme.ColorNamePrimary); n < 300+before {
		t.Fatalf("training curve barely drawn: %d pixels (%d before)", n, before)
	}
	if n := countColour(img, theme.ColorNameWarning); n < 60 {
		t.Fatalf("validation points not drawn: %d pixels", n)
	}
	if c.R.empty.Visible() {
		t.Fatal("empty-chart text still shown")
	}
	// The axis runs to the run's end and the ticks are round numbers.
	if c.R.v.x1 != 5000 || c.R.xLabels[1].Text != "1000" {
		t.Fatalf("x axis to %v, second label %q", c.R.v.x1, c.R.xLabels[1].Text)
	}
}
