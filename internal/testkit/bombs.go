package testkit

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
)

// bombChunk is about how many bytes of a bomb's content are compressed
// once and then repeated.
const bombChunk = 1 << 20

// repeatedZlib is a zlib stream of head, body n times, then tail, made
// without compressing more than one body: each part is deflated on its own
// and flushed to a byte boundary, so it refers to nothing before it and
// its bytes can be written again. A final empty block and the Adler-32 of
// the whole end the stream. (Deflating 200 MB, as a bomb once did, takes
// minutes under -race on a loaded machine, near go test's 10-minute limit.)
func repeatedZlib(head, body []byte, n int, tail []byte) []byte {
	part := func(p []byte) []byte {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, flate.BestCompression)
		w.Write(p)
		w.Flush() // a sync flush: byte-aligned, not the final block
		return b.Bytes()
	}
	out := bytes.NewBuffer([]byte{0x78, 0xda}) // deflate, 32 KiB window, best compression
	out.Write(part(head))
	if n > 0 {
		out.Write(bytes.Repeat(part(body), n))
	}
	out.Write(part(tail))
	out.Write([]byte{0x03, 0x00}) // the final block: fixed codes, end of block only
	sum := adler{a: 1}
	sum.add(head, 1)
	sum.add(body, n)
	sum.add(tail, 1)
	return binary.BigEndian.AppendUint32(out.Bytes(), sum.b<<16|sum.a)
}

// adler is an Adler-32 checksum in the making (a starts at 1).
type adler struct{ a, b uint32 }

// add appends p, n times, reading p once: p alone from a zero state gives
// (pa, pb); appended to (a, b) it gives (a+pa, b+len(p)·a+pb).
func (s *adler) add(p []byte, n int) {
	const mod = 65521
	var pa, pb uint64
	for _, c := range p {
		pa = (pa + uint64(c)) % mod
		pb = (pb + pa) % mod
	}
	a, b, l := uint64(s.a), uint64(s.b), uint64(len(p))%mod
	for range n {
		b = (b + l*a + pb) % mod
		a = (a + pa) % mod
	}
	s.a, s.b = uint32(a), uint32(b)
}

// PDFInflateBomb writes a one-page PDF whose only content stream is
// FlateDecode-compressed and inflates to about textBytes bytes of
// `(…) Tj` text operators: a small file that unpacks into a huge page.
func PDFInflateBomb(textBytes int) []byte {
	line := "(" + strings.Repeat("A", 1000) + ") Tj\n"
	lines := (textBytes + len(line) - 1) / len(line)
	per := bombChunk / len(line) // lines in one repeated part
	z := repeatedZlib([]byte("BT\n/F1 11 Tf\n"), []byte(strings.Repeat(line, per)), lines/per,
		[]byte(strings.Repeat(line, lines%per)+"ET\n"))
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj("<< /Type /Pages /Kids [4 0 R] /Count 1 >>")
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>")
	obj(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", len(z), z))
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// PNGBomb writes a valid PNG of width×height pixels, all zero, at the
// given bit depth (8 or 16) in RGBA: a small file whose decoded image is
// width×height×4×(depth/8) bytes. Its rows are compressed in parts of
// about a megabyte (repeatedZlib), so the file stays small.
func PNGBomb(width, height, depth int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(data)))
		b.Write(n[:])
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.BigEndian.PutUint32(n[:], crc.Sum32())
		b.Write(n[:])
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = byte(depth), 6 // RGBA
	chunk("IHDR", ihdr[:])
	row := 1 + width*4*depth/8   // filter byte 0, then zeros
	per := max(1, bombChunk/row) // rows in one repeated part
	chunk("IDAT", repeatedZlib(nil, make([]byte, per*row), height/per, make([]byte, height%per*row)))
	chunk("IEND", nil)
	return b.Bytes()
}
