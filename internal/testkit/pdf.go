package testkit

import (
	"bytes"
	"fmt"
	"strings"
)

// PDFOption changes a generated PDF.
type PDFOption func(*pdfConfig)

type pdfConfig struct {
	encrypted bool
	version   string
}

// PDFEncrypted makes the PDF password-protected (standard security
// handler, revision 2, with a user password that is not empty).
func PDFEncrypted() PDFOption { return func(c *pdfConfig) { c.encrypted = true } }

// PDFVersion sets the header version ("1.4" by default; "2.0" for a PDF 2.0 file).
func PDFVersion(v string) PDFOption { return func(c *pdfConfig) { c.version = v } }

// MakePDF writes a valid PDF with one page per entry: each page's lines
// (split on "\n") are shown in Helvetica, one text line each. An empty
// entry is a page with no text; no entries make a PDF with no pages'
// text at all. The cross-reference table has the real byte offsets.
func MakePDF(pages []string, opts ...PDFOption) []byte {
	cfg := &pdfConfig{version: "1.4"}
	for _, o := range opts {
		o(cfg)
	}
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) int {
		offsets = append(offsets, b.Len())
		n := len(offsets)
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", n, body)
		return n
	}
	fmt.Fprintf(&b, "%%PDF-%s\n%%\xe2\xe3\xcf\xd3\n", cfg.version)
	// Objects 1 (catalog), 2 (pages) and 3 (font) come first; pages and
	// their contents follow, two objects each.
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i, text := range pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		var cs strings.Builder
		if text != "" {
			cs.WriteString("BT\n/F1 11 Tf\n14 TL\n72 740 Td\n")
			for _, line := range strings.Split(text, "\n") {
				cs.WriteString("(" + pdfEscape(line) + ") Tj T*\n")
			}
			cs.WriteString("ET\n")
		}
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", cs.Len(), cs.String()))
	}
	trailer := fmt.Sprintf("/Size %d /Root 1 0 R", len(offsets)+1)
	if cfg.encrypted {
		o := strings.Repeat("6f", 32)
		u := strings.Repeat("a5", 32)
		n := obj(fmt.Sprintf("<< /Filter /Standard /V 1 /R 2 /Length 40 /O <%s> /U <%s> /P -3904 >>", o, u))
		trailer = fmt.Sprintf("/Size %d /Root 1 0 R /Encrypt %d 0 R /ID [<%s> <%s>]", len(offsets)+1, n,
			strings.Repeat("0f", 16), strings.Repeat("0f", 16))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", trailer, xref)
	return b.Bytes()
}

func pdfEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}
