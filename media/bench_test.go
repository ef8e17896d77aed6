package media_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/media"
)

type nextFunc func(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error

func (f nextFunc) HandleMessage(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
	return f(ctx, in, out)
}

type discardReplier struct{ final string }

func (*discardReplier) Typing(context.Context)          {}
func (*discardReplier) Partial(context.Context, string) {}
func (r *discardReplier) Final(_ context.Context, s string) error {
	r.final = s
	return nil
}
func (*discardReplier) Approve(context.Context, *kairos.ApprovalRequest) (kairos.Decision, error) {
	return kairos.Decision{}, nil
}

// page returns about 3 KB of prose for page n (a dense A4 page).
func page(n int) string {
	var b strings.Builder
	for l := 0; l < 45; l++ {
		fmt.Fprintf(&b, "Page %d line %d: the quarterly figures were reviewed and the budget holds.\n", n, l)
	}
	return b.String()
}

// benchDocument runs the whole document path (download stream, type
// check, extraction, hand-off to the agent) and reports the peak heap
// above the baseline, sampled every millisecond.
func benchDocument(b *testing.B, name, mime string, data []byte, limit int) {
	pol := kairos.DefaultPolicy()
	pol.Media.MaxDocumentBytes = limit
	var got int
	h := media.New(media.Config{Policy: func() *kairos.Policy { return pol },
		Next: nextFunc(func(_ context.Context, in *kairos.Inbound, _ kairos.Replier) error {
			got = len(in.Documents[0].Text)
			return nil
		})})
	att := &kairos.Attachment{Kind: kairos.AttachDocument, Name: name, MIME: mime, Size: int64(len(data)),
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := &discardReplier{}
		in := &kairos.Inbound{Attachments: []*kairos.Attachment{att}}
		if err := h.HandleMessage(context.Background(), in, out); err != nil || out.final != "" {
			b.Fatalf("err %v, reply %q", err, out.final)
		}
	}
	b.StopTimer()
	close(stop)
	<-done
	if p := peak.Load(); p > base.HeapInuse {
		b.ReportMetric(float64(p-base.HeapInuse)/(1<<20), "peak-heap-MB")
	}
	b.ReportMetric(float64(got)/(1<<10), "text-KB")
}

// BenchmarkDocumentPDF5MB: a 5 MB PDF (about 1,700 pages of text),
// extracted whole (limit 16 MB, the policy's maximum).
func BenchmarkDocumentPDF5MB(b *testing.B) {
	var pages []string
	size := 0
	for n := 1; size < 5<<20; n++ {
		p := page(n)
		pages = append(pages, p)
		size += len(p) + 200
	}
	pdf := testkit.MakePDF(pages)
	benchDocument(b, "big.pdf", "application/pdf", pdf, 16<<20)
}

// BenchmarkDocumentText50Pages: a 50-page plain text (about 150 KB),
// under the default limit.
func BenchmarkDocumentText50Pages(b *testing.B) {
	var t strings.Builder
	for n := 1; n <= 50; n++ {
		t.WriteString(page(n))
		t.WriteString("\f\n")
	}
	benchDocument(b, "fifty.txt", "text/plain", []byte(t.String()), kairos.DefaultMaxDocumentBytes)
}

// BenchmarkDocumentPDF50Pages: the same 50 pages as a PDF.
func BenchmarkDocumentPDF50Pages(b *testing.B) {
	var pages []string
	for n := 1; n <= 50; n++ {
		pages = append(pages, page(n))
	}
	benchDocument(b, "fifty.pdf", "application/pdf", testkit.MakePDF(pages), kairos.DefaultMaxDocumentBytes)
}

// BenchmarkPrepareImage: a 4000×3000 photo scaled to 1568 px.
func BenchmarkPrepareImage(b *testing.B) {
	data := encodePNG(b, 4000, 3000, 255)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := media.PrepareImage(data, kairos.DefaultMaxImageSide); err != nil {
			b.Fatal(err)
		}
	}
}
