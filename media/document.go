package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/kairos-agent/kairos"
)

// Documents larger than media.max_document_bytes are refused, not
// summarised: a summary in chunks costs many model calls the user did not
// ask for, and a partial read would answer as if the whole file were seen.

// document downloads a text or PDF document and adds its text to the turn
// as untrusted content.
func (h *Handler) document(ctx context.Context, pol *kairos.Policy, in *kairos.Inbound, a *kairos.Attachment, kind fileKind) (string, error) {
	limit := pol.Media.MaxDocumentBytes
	if kind == kindText && a.Size > int64(limit) {
		h.cfg.Metrics.MediaFailure(a.Kind, "too_long")
		return tooLong(displayName(a.Name), a.Size, limit), nil
	}
	data, msg, err := h.fetch(ctx, a)
	if msg != "" || err != nil {
		return msg, err
	}
	var text string
	if kind == kindPDF {
		text, err = PDFText(data, limit)
	} else {
		text, err = PlainText(data, limit)
	}
	if err != nil {
		if m := userError(err); m != "" {
			h.cfg.Metrics.MediaFailure(a.Kind, "bad_document")
			return strings.ReplaceAll(m, "%NAME%", displayName(a.Name)), nil
		}
		return "", err
	}
	h.cfg.Metrics.MediaFile(a.Kind, int64(len(data)))
	in.Documents = append(in.Documents, kairos.DocumentPart{Name: a.Name, MIME: a.MIME, Text: text})
	return "", nil
}

func displayName(name string) string {
	if name == "" {
		return "That document"
	}
	return "“" + name + "”"
}

func tooLong(name string, size int64, limit int) string {
	return fmt.Sprintf("%s is too long for me: it has more than %s of text and I read documents up to %s. Please send the part you need.",
		name, kib(size), kib(int64(limit)))
}

func kib(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KB", (n+1023)/1024)
}

// PlainText checks a text document (UTF-8, not empty, at most limit bytes)
// and returns it. Its refusals are EINVALID sentences with %NAME% for the
// file's name.
func PlainText(data []byte, limit int) (string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // BOM
	if len(bytes.TrimSpace(data)) == 0 {
		return "", kairos.Errorf(kairos.EINVALID, "%%NAME%% is empty: there's no text in it for me to read.")
	}
	if len(data) > limit {
		return "", kairos.Errorf(kairos.EINVALID, "%s", tooLong("%NAME%", int64(len(data)), limit))
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return "", kairos.Errorf(kairos.EINVALID, "%%NAME%% doesn't look like a text file (it isn't UTF-8 text), so I can't read it.")
	}
	return string(data), nil
}

// PDFText extracts the text layer of a PDF with the default time budget;
// see PDFTextWithin.
func PDFText(data []byte, limit int) (string, error) {
	return PDFTextWithin(data, limit, PDFTimeBudget)
}

// PDFTextWithin extracts the text layer of a PDF, page by page and content
// stream by content stream, stopping as soon as the text passes limit
// bytes, the page content unpacks to more than ContentLimit(limit) bytes,
// or budget has passed. Encrypted, empty, malformed, too long and too slow
// PDFs are EINVALID sentences with %NAME% for the file's name; the
// library's panics on malformed files are recovered.
func PDFTextWithin(data []byte, limit int, budget time.Duration) (text string, err error) {
	src := &deadlineReader{r: pdfHeaderCompat(data), deadline: time.Now().Add(budget)}
	ex := &pdfExtract{src: src, limit: limit, contentLimit: ContentLimit(limit), fonts: map[string]*pdf.Font{}}
	defer func() {
		if x := recover(); x != nil {
			text, err = "", ex.refusal(x)
		}
	}()
	r, err := pdf.NewReader(src, int64(len(data)))
	if err != nil {
		if src.expired.Load() {
			return "", errPDFSlow
		}
		if errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(err.Error(), "encrypt") {
			return "", kairos.Errorf(kairos.EINVALID, "%%NAME%% is password-protected, so I can't read it. Please send a copy without the password, or paste the text.")
		}
		return "", errPDFDamaged
	}
	if err := walkPages(r.Trailer().Key("Root").Key("Pages"), ex.page); err != nil {
		return "", err
	}
	out := strings.ToValidUTF8(ex.text.String(), "")
	if strings.TrimSpace(out) == "" {
		return "", kairos.Errorf(kairos.EINVALID, "%%NAME%% has no text I can read: it may be empty or scanned pages (images). Please send the text, or photos of the pages.")
	}
	return out, nil
}

// maxPageNodes bounds the page-tree walk: a malformed tree may point back
// at itself.
const maxPageNodes = 200_000

// walkPages visits the leaves of a page tree in order, in one pass (the
// library's Reader.Page(n) walks the tree from the root for every page,
// which is quadratic in the page count of a flat tree).
func walkPages(root pdf.Value, visit func(pdf.Page) error) error {
	nodes := 0
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		nodes++
		if depth > 64 || nodes > maxPageNodes {
			return kairos.Errorf(kairos.EINVALID, "Sorry, I couldn't read %%NAME%%: the PDF seems damaged.")
		}
		switch v.Key("Type").Name() {
		case "Pages":
			kids := v.Key("Kids")
			for i := 0; i < kids.Len(); i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		case "Page":
			return visit(pdf.Page{V: v})
		}
		return nil
	}
	return walk(root, 0)
}

// pdfHeaderCompat lets the library (which knows PDF 1.0 to 1.7) read PDF
// 2.0 files, whose syntax it handles: it presents the header as 1.7.
func pdfHeaderCompat(data []byte) *bytes.Reader {
	if bytes.HasPrefix(data, []byte("%PDF-2.")) && len(data) > 8 {
		c := bytes.Clone(data[:8])
		copy(c, "%PDF-1.7")
		return bytes.NewReader(append(c, data[8:]...))
	}
	return bytes.NewReader(data)
}
