package media_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/media"
)

func TestPDFText(t *testing.T) {
	two := testkit.MakePDF([]string{"Invoice 2026-117\nTotal due: 412.50 EUR (by 1 Dec)", "Page two: thanks"})
	cases := []struct {
		name    string
		data    []byte
		limit   int
		want    []string // substrings of the text
		wantErr string   // substring of the refusal
	}{
		{"two pages", two, 1 << 20, []string{"Invoice 2026-117", "Total due: 412.50 EUR (by 1 Dec)", "Page two: thanks"}, ""},
		{"PDF 2.0", testkit.MakePDF([]string{"new header"}, testkit.PDFVersion("2.0")), 1 << 20, []string{"new header"}, ""},
		{"empty page", testkit.MakePDF([]string{""}), 1 << 20, nil, "has no text I can read"},
		{"no pages", testkit.MakePDF(nil), 1 << 20, nil, "has no text I can read"},
		{"password", testkit.MakePDF([]string{"secret"}, testkit.PDFEncrypted()), 1 << 20, nil, "password-protected"},
		{"over the limit", two, 20, nil, "too long for me"},
		{"truncated", two[:len(two)/2], 1 << 20, nil, "seems damaged"},
		{"not a pdf", []byte("hello"), 1 << 20, nil, "seems damaged"},
		{"empty file", nil, 1 << 20, nil, "seems damaged"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, err := media.PDFText(tc.data, tc.limit)
			if tc.wantErr != "" {
				if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.wantErr) {
					t.Fatalf("err = %v, want EINVALID containing %q (text %q)", err, tc.wantErr, text)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("text %q lacks %q", text, w)
				}
			}
		})
	}
}

func FuzzPDFText(f *testing.F) {
	f.Add(testkit.MakePDF([]string{"hello\nworld"}))
	f.Add(testkit.MakePDF([]string{"x"}, testkit.PDFEncrypted()))
	f.Add([]byte("%PDF-1.4\n%%EOF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		text, err := media.PDFText(data, 1<<16)
		if err != nil && kairos.ErrorCode(err) != kairos.EINVALID {
			t.Fatalf("non-EINVALID error %v", err)
		}
		if err == nil && len(text) > 1<<16 {
			t.Fatalf("text over the limit: %d", len(text))
		}
	})
}

// TestPDFTextBombs: files that unpack far beyond their size are refused
// while they unpack, not after: the allocations stay far below what the
// unpacked content would take.
func TestPDFTextBombs(t *testing.T) {
	cases := []struct {
		name    string
		data    []byte
		budget  time.Duration
		wantErr string
	}{
		// The bombs must end on their size, not the clock: they take
		// about 0.5 s under -race on a loaded machine, a tenth of
		// PDFTimeBudget, so they get a backstop that load cannot reach.
		{"inflates to 200 MB", testkit.PDFInflateBomb(200 << 20), time.Minute, "too large for me to read"},
		{"10 MB of text in one stream", testkit.PDFInflateBomb(10 << 20), time.Minute, "too long for me"},
		{"time budget spent", testkit.MakePDF([]string{"fine"}), 0, "takes me too long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			text, err := media.PDFTextWithin(tc.data, kairos.DefaultMaxDocumentBytes, tc.budget)
			runtime.ReadMemStats(&after)
			if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.wantErr) {
				t.Fatalf("err = %v, want EINVALID containing %q (text %d bytes)", err, tc.wantErr, len(text))
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB reading a %d KiB file, want under 64 MiB", alloc>>20, len(tc.data)>>10)
			}
		})
	}
}

// BenchmarkPDFInflateBomb: a 424 KB PDF whose content stream inflates to
// 200 MB of text, refused under the default limit.
func BenchmarkPDFInflateBomb(b *testing.B) {
	data := testkit.PDFInflateBomb(200 << 20)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := media.PDFText(data, kairos.DefaultMaxDocumentBytes); err == nil {
			b.Fatal("bomb accepted")
		}
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.TotalAlloc-base.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/op")
}
