package web

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"

	"github.com/kairos-agent/kairos/internal/chart"
	"github.com/kairos-agent/kairos/usage"
)

// The console's charts are drawn this size and shown as wide as their
// card (about 560 px on a desk, 330 px on a phone), so their letters stay
// readable.
const chartWidth, chartHeight = 560, 320

// figure is one chart of a page and the table it is drawn from.
type figure struct {
	Title          string
	Legend         string // the series' name
	XTitle, YTitle string
	XHead, YHead   string // the table's column headings
	Labels         []string
	Values         []float64
	Format         func(float64) string // how a value is written (axis and table)
	XLabels        int                  // the most category labels on the axis
}

// render draws the figure as /usage draws its picture (internal/chart),
// as an SVG image (the CSP allows no inline style, and no script), with
// the numbers as a table under it. A chart that cannot be drawn leaves
// the table.
func (f figure) render() (template.HTML, error) {
	spec := chart.Spec{Title: f.Title, Labels: f.Labels, Values: f.Values, Series: f.Legend, XTitle: f.XTitle, YTitle: f.YTitle,
		Format: f.Format, XLabels: f.XLabels, Width: chartWidth, Height: chartHeight}
	var b bytes.Buffer
	b.WriteString(`<figure class="chart">`)
	svg, err := spec.SVG()
	if err == nil {
		fmt.Fprintf(&b, `<img src="data:image/svg+xml;base64,%s" alt="%s" width="%d" height="%d">`,
			base64.StdEncoding.EncodeToString(svg), template.HTMLEscapeString(f.Title), chartWidth, chartHeight)
	}
	fmt.Fprintf(&b, `<details><summary>%s as a table</summary><table class="numbers"><thead><tr><th>%s</th><th>%s</th></tr></thead><tbody>`,
		template.HTMLEscapeString(f.Title), template.HTMLEscapeString(f.XHead), template.HTMLEscapeString(f.YHead))
	for i, l := range f.Labels {
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td></tr>`, template.HTMLEscapeString(l), template.HTMLEscapeString(f.Format(f.Values[i])))
	}
	b.WriteString(`</tbody></table></details></figure>`)
	return template.HTML(b.String()), err
}

// count writes a count ("1,204").
func count(v float64) string { return usage.Thousands(int64(v + 0.5)) }
