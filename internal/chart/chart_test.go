package chart_test

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
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
