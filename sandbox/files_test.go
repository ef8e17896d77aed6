package sandbox

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

func TestAttachments(t *testing.T) {
	raw := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	files := []kairos.CellFile{
		{Name: "report.pdf", Kind: kairos.AttachDocument, MIME: "application/pdf", Size: 5000, Text: "Revenue grew 12%."},
		{Name: "photo.jpg", Kind: kairos.AttachPhoto, MIME: "image/png", Size: int64(len(raw)),
			Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }},
		{Name: "notes.csv", Kind: kairos.AttachDocument, MIME: "text/csv", Size: 8,
			Open: func(context.Context) (io.ReadCloser, error) {
				return io.NopCloser(strings.NewReader("a,b\n1,2\n")), nil
			}},
	}
	cases := []struct {
		name, code string
		budget     int64
		want       string
		category   string
	}{
		{"list", `output(attachments())`, 0,
			`[{"name":"report.pdf","kind":"document","mime":"application/pdf","size":17},{"name":"photo.jpg","kind":"photo","mime":"image/png","size":7},{"name":"notes.csv","kind":"document","mime":"text/csv","size":8}]`, ""},
		{"extracted text", `output(readAttachment("report.pdf").text)`, 0, `"Revenue grew 12%."`, ""},
		{"utf-8 bytes", `output(readAttachment("notes.csv").text.split("\n")[1])`, 0, `"1,2"`, ""},
		{"binary as base64", `output(readAttachment("photo.jpg").base64)`, 0, `"iVBORwABAg=="`, ""},
		{"unknown", `readAttachment("nope.txt")`, 0, "", kairos.CatReference},
		{"bytes-read budget", `readAttachment("report.pdf")`, 10, "", kairos.CatBudget},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tk := task(tc.code)
			tk.Files = files
			tk.Budget.MaxBytesRead = tc.budget
			res := run(t, tk)
			if tc.category != "" {
				if res.Success || res.ErrorCategory != tc.category {
					t.Fatalf("want %s failure, got %+v", tc.category, res)
				}
				return
			}
			if !res.Success || string(res.Output) != tc.want {
				t.Fatalf("output %s (%+v), want %s", res.Output, res, tc.want)
			}
		})
	}
	// No files: an empty list, not an error.
	if res := run(t, task(`output(attachments().length)`)); string(res.Output) != "0" {
		t.Fatalf("no files: %s %+v", res.Output, res)
	}
}
