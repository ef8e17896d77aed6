package testkit

import (
	"bytes"
	"compress/zlib"
	"image/png"
	"io"
	"strings"
	"testing"
)

func inflate(t *testing.T, z []byte) []byte {
	t.Helper()
	r, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r) // checks the Adler-32 at the end
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	return out
}

// A repeated part inflates to what it stands for, checksum included.
func TestRepeatedZlib(t *testing.T) {
	body := []byte(strings.Repeat("(AAAA) Tj\n", 5000) + "\xff\x00\x80")
	for _, n := range []int{0, 1, 7, 300} {
		z := repeatedZlib([]byte("BT\n"), body, n, []byte("ET\n"))
		want := "BT\n" + strings.Repeat(string(body), n) + "ET\n"
		if got := inflate(t, z); string(got) != want {
			t.Fatalf("n=%d: %d bytes inflated, want %d", n, len(got), len(want))
		}
	}
	if got := inflate(t, repeatedZlib(nil, nil, 3, nil)); len(got) != 0 {
		t.Fatalf("empty parts inflate to %d bytes", len(got))
	}
}

// The bombs are what they say: the PDF's stream unpacks to the text
// operators asked for, the PNG decodes to its declared size.
func TestBombsUnpack(t *testing.T) {
	pdf := PDFInflateBomb(3 << 20)
	_, rest, _ := bytes.Cut(pdf, []byte("stream\n"))
	stream, _, ok := bytes.Cut(rest, []byte("\nendstream"))
	if !ok {
		t.Fatal("no content stream")
	}
	line := "(" + strings.Repeat("A", 1000) + ") Tj\n"
	want := "BT\n/F1 11 Tf\n" + strings.Repeat(line, (3<<20+len(line)-1)/len(line)) + "ET\n"
	if got := inflate(t, stream); string(got) != want {
		t.Fatalf("the PDF's stream inflates to %d bytes, want %d", len(got), len(want))
	}
	if len(pdf) > 20<<10 {
		t.Errorf("a 3 MB PDF bomb is %d bytes", len(pdf))
	}
	img, err := png.Decode(bytes.NewReader(PNGBomb(300, 2000, 16)))
	if err != nil || img.Bounds().Dx() != 300 || img.Bounds().Dy() != 2000 {
		t.Fatalf("PNG bomb: %v %v", err, img)
	}
}
