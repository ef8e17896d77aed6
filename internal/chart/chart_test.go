package chart_test

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/chart"
)

func TestBarsIsPNGOfSizeWithBars(t *testing.T) {
	labels := make([]string, 30)
	values := make([]float64, 30)
	for i := range labels {
		labels[i] = fmt.Sprint(i + 1)
		if i%3 != 0 {
			values[i] = float64(1000 + 100*i)
		}
	}
	data, err := chart.Bars("Tokens per day", "last 30 days", labels, values)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if got := img.Bounds().Size(); got.X != chart.Width || got.Y != chart.Height {
		t.Fatalf("size = %v, want %dx%d", got, chart.Width, chart.Height)
	}
	if os.Getenv("CHART_OUT") != "" {
		os.WriteFile(os.Getenv("CHART_OUT"), data, 0o644)
	}
	if n := chart.CountBars(img); n != 20 {
		t.Fatalf("bars = %d, want 20", n)
	}
	if os.Getenv("CHART_OUT") != "" {
		os.WriteFile(os.Getenv("CHART_OUT"), data, 0o644)
	}
}

// TestWriteExample renders doc/usage-example.png when CHART_EXAMPLE names
// the file (go test -run TestWriteExample ./internal/chart/).
func TestWriteExample(t *testing.T) {
	out := os.Getenv("CHART_EXAMPLE")
	if out == "" {
		t.Skip("CHART_EXAMPLE not set")
	}
	var labels []string
	var values []float64
	day := time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC)
	for i := range 30 {
		d := day.AddDate(0, 0, i)
		labels = append(labels, d.Format("2"))
		v := 0.0
		if d.Weekday() != time.Saturday {
			v = float64(9000 + (i*7919)%23000)
		}
		values = append(values, v)
	}
	data, err := chart.Bars("Your tokens per day, last 30 days (Europe/Lisbon)", "", labels, values)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The SVG drawing is the same chart: a title, a legend naming the series,
// a value axis written by Format with at least four ticks, and the axes'
// titles.
func TestSpecSVGHasAxesAndLegend(t *testing.T) {
	s := chart.Spec{Title: "Cost per day", Labels: []string{"1 Nov", "2 Nov", "3 Nov", "4 Nov"}, Values: []float64{0.0004, 1.2, 0, 0.3},
		Series: "cost (USD)", XTitle: "day (Lisbon)", Format: func(v float64) string { return fmt.Sprintf("$%.2f", v) }, Width: 560, Height: 320}
	svg, err := s.SVG()
	if err != nil {
		t.Fatal(err)
	}
	text := string(svg)
	ticks := regexp.MustCompile(`>\$\d+\.\d\d<`).FindAllString(text, -1)
	for _, want := range []string{`viewBox="0 0 560 320"`, ">Cost per day<", ">cost (USD)<", ">day (Lisbon)<", ">1 Nov<"} {
		if !strings.Contains(text, want) {
			t.Errorf("the SVG lacks %s", want)
		}
	}
	if len(ticks) < 4 {
		t.Errorf("%d value-axis ticks written by Format, want 4 or more: %q", len(ticks), ticks)
	}
	if _, err := (chart.Spec{Labels: []string{"a"}}).SVG(); err == nil {
		t.Error("one label and no value drew a chart")
	}
}
