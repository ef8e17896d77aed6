package media

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Each parser, fuzzed: it never panics, it ends after reading its input
// once (its reads are counted: a parser that loops without reading, or
// reads past the end, fails), and a length it reports is within
// (0, maxLength].

// countReads counts the reads of its reader.
type countReads struct {
	r     *bytes.Reader
	reads int
}

func (c *countReads) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

func fuzzParser(f *testing.F, name string, parse func(*bufio.Reader) (time.Duration, error), seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	if files, _ := filepath.Glob(filepath.Join("testdata", "*")); len(files) > 0 {
		for _, fx := range fixtures {
			if b, err := os.ReadFile(filepath.Join("testdata", fx.file)); err == nil && len(b) < 16<<10 {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &countReads{r: bytes.NewReader(data)}
		d, err := parse(bufio.NewReaderSize(src, 64<<10))
		if err == nil && (d < 0 || d > maxLength) {
			t.Fatalf("%s: length %v out of range", name, d)
		}
		// Every step of a parser consumes input: it reads no more often
		// than once per byte (a parser that looped on an ended stream
		// would read it without end).
		if src.reads > len(data)+16 {
			t.Fatalf("%s: %d reads of %d bytes", name, src.reads, len(data))
		}
	})
}

func FuzzOggDuration(f *testing.F) {
	fuzzParser(f, "ogg", oggDuration, oggOpus(20, 960, 312), oggOpus(3, 1, 0), oggOpus(0, 0, 0))
}

func FuzzMP3Duration(f *testing.F) {
	fuzzParser(f, "mp3", mp3Duration, mp3Frames(5, 3), mp3Frames(0, 0)[10+5:])
}

func FuzzMP4Duration(f *testing.F) {
	fuzzParser(f, "mp4", mp4Duration, mp4Movie(1000, 5000, 48000, 48000), mp4Movie(600, 1, 44100, 1<<31))
}

func FuzzWAVDuration(f *testing.F) {
	fuzzParser(f, "wav", wavDuration, wavBytes(8000, 100, 100), wavBytes(16000, 10, 0xffffffff))
}

func FuzzWebMDuration(f *testing.F) {
	fuzzParser(f, "webm", webmDuration, webmFile(1_000_000, 2500, nil), webmFile(1000, 0, []int16{-5, 7, 32767}))
}

func FuzzFLACDuration(f *testing.F) {
	fuzzParser(f, "flac", flacDuration, flacHeader(44100, 1<<35), flacHeader(8000, 8000))
}

// FuzzAudioDuration is the whole: any bytes get a length or an error.
func FuzzAudioDuration(f *testing.F) {
	fuzzParser(f, "any", func(br *bufio.Reader) (time.Duration, error) {
		d, _, err := AudioDuration(br)
		return d, err
	}, []byte("ID3\x04\x00\x00\x00\x00\x00\x00OggS"), []byte("RIFF\x00\x00\x00\x00WAVE"))
}
