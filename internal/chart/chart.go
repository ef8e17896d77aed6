package chart

import (
	"fmt"
	"image"

	"github.com/go-analyze/charts"
)

// The size of every chart, in pixels (Telegram shows a photo of this
// shape whole in a chat).
const (
	Width  = 800
	Height = 400
)

// BarColor is the colour of the bars (#2F6FDE).
var BarColor = charts.Color{R: 0x2F, G: 0x6F, B: 0xDE, A: 0xFF}

// Bars draws one bar per label with its value (no bar where the value is
// 0), titled title with subtitle under it, as a Width×Height PNG.
func Bars(title, subtitle string, labels []string, values []float64) ([]byte, error) {
	if len(labels) != len(values) || len(values) == 0 {
		return nil, fmt.Errorf("chart: %d labels for %d values", len(labels), len(values))
	}
	vals := make([]float64, len(values))
	for i, v := range values {
		vals[i] = v
		if v <= 0 {
			vals[i] = charts.GetNullValue() // no bar at all (0 draws a sliver)
		}
	}
	theme := charts.GetTheme(charts.ThemeLight).WithSeriesColors([]charts.Color{BarColor})
	p, err := charts.BarRender([][]float64{vals},
		charts.PNGOutputOptionFunc(),
		charts.DimensionsOptionFunc(Width, Height),
		charts.ThemeOptionFunc(theme),
		charts.TitleTextOptionFunc(title, subtitle),
		charts.XAxisLabelsOptionFunc(labels),
		charts.YAxisOptionFunc(charts.YAxisOption{Min: charts.Ptr(0.0)}), // bars start at 0
		charts.PaddingOptionFunc(charts.Box{Top: 20, Left: 20, Right: 30, Bottom: 20}),
	)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	b, err := p.Bytes()
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	return b, nil
}

// CountBars counts the bars of a chart drawn by Bars: the runs of
// BarColor along the lowest row that holds it (for tests and checks).
func CountBars(img image.Image) int {
	b := img.Bounds()
	is := func(x, y int) bool {
		r, g, bl, _ := img.At(x, y).RGBA()
		return uint8(r>>8) == BarColor.R && uint8(g>>8) == BarColor.G && uint8(bl>>8) == BarColor.B
	}
	for y := b.Max.Y - 1; y >= b.Min.Y; y-- {
		runs, in := 0, false
		for x := b.Min.X; x < b.Max.X; x++ {
			on := is(x, y)
			if on && !in {
				runs++
			}
			in = on
		}
		if runs > 0 {
			return runs
		}
	}
	return 0
}
