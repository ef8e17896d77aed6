package chart

import (
	"cmp"
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

// Spec is one bar chart: a title, one bar per label with its value (no
// bar where the value is 0), the series' name for the legend, the axes'
// titles, and how the value axis writes its numbers.
type Spec struct {
	Title, Subtitle string
	Labels          []string
	Values          []float64
	Series          string // the legend ("" for none)
	XTitle, YTitle  string
	// Format writes a value on the value axis ("$0.05", "1,200"); nil
	// lets the renderer choose.
	Format func(float64) string
	// XLabels is how many category labels the axis shows at most (0: the
	// renderer decides), so sixty minutes do not crowd it.
	XLabels int
	// Width and Height are the picture's size (0: Width×Height); a smaller
	// picture shown as wide has larger letters.
	Width, Height int
}

// Bars draws one bar per label with its value, titled title with subtitle
// under it, as a Width×Height PNG (the /usage and /codestats pictures).
func Bars(title, subtitle string, labels []string, values []float64) ([]byte, error) {
	return Spec{Title: title, Subtitle: subtitle, Labels: labels, Values: values}.PNG()
}

// PNG draws the chart as a Width×Height PNG.
func (s Spec) PNG() ([]byte, error) { return s.render(charts.PNGOutputOptionFunc()) }

// SVG draws the same chart as SVG (its styles inline: show it as an
// image, not inline in a page whose CSP forbids inline styles).
func (s Spec) SVG() ([]byte, error) { return s.render(charts.SVGOutputOptionFunc()) }

func (s Spec) render(out charts.OptionFunc) ([]byte, error) {
	if len(s.Labels) != len(s.Values) || len(s.Values) == 0 {
		return nil, fmt.Errorf("chart: %d labels for %d values", len(s.Labels), len(s.Values))
	}
	vals := make([]float64, len(s.Values))
	for i, v := range s.Values {
		vals[i] = v
		if v <= 0 {
			vals[i] = charts.GetNullValue() // no bar at all (0 draws a sliver)
		}
	}
	theme := charts.GetTheme(charts.ThemeLight).WithSeriesColors([]charts.Color{BarColor})
	y := charts.YAxisOption{Min: charts.Ptr(0.0), Title: s.YTitle} // bars start at 0
	if s.Format != nil {
		y.ValueFormatter = s.Format
	}
	opts := []charts.OptionFunc{out,
		charts.DimensionsOptionFunc(cmp.Or(s.Width, Width), cmp.Or(s.Height, Height)),
		charts.ThemeOptionFunc(theme),
		charts.TitleTextOptionFunc(s.Title, s.Subtitle),
		charts.XAxisOptionFunc(charts.XAxisOption{Labels: s.Labels, Title: s.XTitle, LabelCount: s.XLabels}),
		charts.YAxisOptionFunc(y),
		charts.PaddingOptionFunc(charts.Box{Top: 20, Left: 20, Right: 30, Bottom: 20}),
	}
	if s.Series != "" {
		opts = append(opts, charts.LegendOptionFunc(charts.LegendOption{SeriesNames: []string{s.Series}, Offset: charts.OffsetRight}))
	}
	p, err := charts.BarRender([][]float64{vals}, opts...)
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
