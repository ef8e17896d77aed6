package media

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ledongthuc/pdf"

	"github.com/kairos-agent/kairos"
)

// PDFTimeBudget is how long reading one PDF may take before it is
// refused: a small file can hold streams that unpack for seconds.
const PDFTimeBudget = 5 * time.Second

// ContentLimit is how many bytes a PDF's page content (its content
// streams and font maps, once unpacked) may hold when documents may have
// limit bytes of text: content carries positions and drawing besides the
// text, so it is allowed well beyond the text, but not without end (a
// 400 KB file can unpack to hundreds of megabytes).
func ContentLimit(limit int) int64 { return 16<<20 + 8*int64(limit) }

var (
	errPDFDamaged = kairos.Errorf(kairos.EINVALID, "Sorry, I couldn't read %%NAME%%: the PDF seems damaged.")
	errPDFSlow    = kairos.Errorf(kairos.EINVALID, "Sorry, %%NAME%% takes me too long to read (more than %d seconds): it may be huge once unpacked, or damaged. Please send the part you need as text.",
		int(PDFTimeBudget/time.Second))
)

// stop is the panic value that ends an extraction early: the library
// parses content streams with callbacks and no way to stop them.
type stop struct{ err error }

// pdfExtract is one PDF's extraction: the text so far and what it may
// still spend.
type pdfExtract struct {
	src          *deadlineReader
	limit        int
	contentLimit int64
	content      int64 // unpacked content bytes seen so far
	fonts        map[string]*pdf.Font
	checked      map[*pdf.Font]bool // fonts whose maps were measured
	text         strings.Builder
	pages        int
}

// refusal turns a recovered panic into the sentence for the user.
func (ex *pdfExtract) refusal(x any) error {
	if s, ok := x.(stop); ok {
		return s.err
	}
	if ex.src.expired.Load() {
		return errPDFSlow
	}
	return errPDFDamaged
}

// page adds one page's text. Each content stream is measured unpacked
// before it is interpreted (so no stream builds a huge token), and the
// interpretation stops as soon as the text passes the limit.
func (ex *pdfExtract) page(p pdf.Page) (err error) {
	ex.pages++
	defer func() {
		if x := recover(); x != nil {
			if s, ok := x.(stop); ok {
				panic(s)
			}
			if ex.src.expired.Load() {
				err = errPDFSlow
				return
			}
			err = kairos.Errorf(kairos.EINVALID, "Sorry, I couldn't read page %d of %%NAME%%: the PDF seems damaged.", ex.pages)
		}
	}()
	for _, name := range p.Fonts() {
		if _, ok := ex.fonts[name]; !ok {
			f := p.Font(name)
			ex.fonts[name] = &f
		}
	}
	contents := p.V.Key("Contents")
	var streams []pdf.Value
	switch contents.Kind() {
	case pdf.Stream:
		streams = append(streams, contents)
	case pdf.Array:
		for i := 0; i < contents.Len(); i++ {
			streams = append(streams, contents.Index(i))
		}
	}
	var page bytes.Buffer
	var enc pdf.TextEncoding = nopEncoding{}
	for _, s := range streams {
		if s.Kind() != pdf.Stream {
			continue
		}
		ex.measure(s)
		ops := 0
		pdf.Interpret(s, func(stk *pdf.Stack, op string) {
			ops++
			if ops%1024 == 0 {
				ex.checkTime()
			}
			enc = ex.operator(&page, enc, stk, op)
			if ex.text.Len()+page.Len() > ex.limit {
				panic(stop{kairos.Errorf(kairos.EINVALID, "%s", tooLong("%NAME%", int64(ex.text.Len()+page.Len()), ex.limit))})
			}
		})
	}
	if ex.text.Len() > 0 && page.Len() > 0 {
		ex.text.WriteString("\n\n")
	}
	ex.text.Write(page.Bytes())
	return nil
}

// operator applies one content-stream operator to the page's text (as the
// library's Page.GetPlainText does) and returns the current encoding.
func (ex *pdfExtract) operator(page *bytes.Buffer, enc pdf.TextEncoding, stk *pdf.Stack, op string) pdf.TextEncoding {
	args := make([]pdf.Value, stk.Len())
	for i := len(args) - 1; i >= 0; i-- {
		args[i] = stk.Pop()
	}
	show := func(raw string) {
		for _, r := range enc.Decode(raw) {
			page.WriteRune(r)
		}
	}
	switch op {
	case "BT", "T*":
		page.WriteByte('\n')
	case "Tf":
		if len(args) != 2 {
			panic("bad Tf")
		}
		f, ok := ex.fonts[args[0].Name()]
		if !ok {
			return nopEncoding{}
		}
		if !ex.checked[f] {
			if m := f.V.Key("ToUnicode"); m.Kind() == pdf.Stream {
				ex.measure(m)
			}
			if ex.checked == nil {
				ex.checked = map[*pdf.Font]bool{}
			}
			ex.checked[f] = true
		}
		return f.Encoder()
	case "Tj", "'", "\"":
		if len(args) == 0 {
			panic("bad text operator")
		}
		show(args[len(args)-1].RawString())
	case "TJ":
		if len(args) != 1 {
			panic("bad TJ")
		}
		v := args[0]
		for i := 0; i < v.Len(); i++ {
			if x := v.Index(i); x.Kind() == pdf.String {
				show(x.RawString())
			}
		}
	}
	return enc
}

// measure unpacks stream s into nothing, counting its bytes against the
// content limit and checking the time budget as it goes.
func (ex *pdfExtract) measure(s pdf.Value) {
	rc := s.Reader()
	defer rc.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.Read(buf)
		ex.content += int64(n)
		if ex.content > ex.contentLimit {
			panic(stop{kairos.Errorf(kairos.EINVALID, "%%NAME%% is too large for me to read: its pages unpack to more than %s. Please send the part you need as text.",
				kib(ex.contentLimit))})
		}
		ex.checkTime()
		if err == io.EOF {
			return
		}
		if err != nil {
			panic(fmt.Errorf("read stream: %w", err))
		}
	}
}

func (ex *pdfExtract) checkTime() {
	if time.Now().After(ex.src.deadline) {
		ex.src.expired.Store(true)
		panic(stop{errPDFSlow})
	}
}

// deadlineReader is the file under the library: past the deadline every
// read fails, which ends whatever the library was parsing.
type deadlineReader struct {
	r        io.ReaderAt
	deadline time.Time
	expired  atomic.Bool
}

func (d *deadlineReader) ReadAt(p []byte, off int64) (int, error) {
	if time.Now().After(d.deadline) {
		d.expired.Store(true)
		return 0, fmt.Errorf("pdf: time budget spent")
	}
	return d.r.ReadAt(p, off)
}

// nopEncoding passes bytes through as text (no font selected).
type nopEncoding struct{}

func (nopEncoding) Decode(raw string) string { return raw }
