package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"os"
	"path/filepath"
	"testing"
	"time"
)

// The fixtures under testdata were made with flite, sox and ffmpeg from
// one spoken sentence (see testdata/README.md); want is ffprobe's length.
// A parser may say a little more than ffprobe (an AAC track's table
// counts the encoder's priming samples that its edit list trims), never
// less.
var fixtures = []struct {
	file, format string
	want         time.Duration
}{
	{"voice.ogg", "ogg", 3999750 * time.Microsecond},  // Opus, as Telegram's voice notes
	{"vorbis.ogg", "ogg", 3993250 * time.Microsecond}, // Vorbis
	{"cbr.mp3", "mp3", 4176 * time.Millisecond},       // constant bitrate, LAME's Info tag
	{"vbr.mp3", "mp3", 4176 * time.Millisecond},       // variable bitrate, Xing tag
	{"speech.m4a", "mp4", 3994 * time.Millisecond},    // AAC, moov after mdat
	{"fast.m4a", "mp4", 3994 * time.Millisecond},      // AAC, moov first
	{"videonote.mp4", "mp4", 2600 * time.Millisecond}, // a round video message
	{"speech.webm", "webm", 4001 * time.Millisecond},  // Opus in WebM, with Duration
	{"live.webm", "webm", 4001 * time.Millisecond},    // streamed: no Duration, sizes unknown
	{"speech.flac", "flac", 600 * time.Millisecond},   // FLAC
}

func TestAudioDurationOfRealFiles(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", fx.file))
			if err != nil {
				t.Fatal(err)
			}
			d, format, err := AudioDuration(bytes.NewReader(b))
			if err != nil || format != fx.format {
				t.Fatalf("AudioDuration = %v, %q, %v; want %v, %q", d, format, err, fx.want, fx.format)
			}
			if d < fx.want-20*time.Millisecond || d > fx.want+150*time.Millisecond {
				t.Fatalf("length %v, want %v (ffprobe), at most 20 ms less or 150 ms more", d, fx.want)
			}
		})
	}
}

// wavBytes builds a PCM WAV of n data bytes at byteRate, with a data
// chunk that declares declared bytes.
func wavBytes(byteRate uint32, n int, declared uint32) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+n))
	b.WriteString("WAVEfmt ")
	binary.Write(&b, binary.LittleEndian, uint32(16))
	binary.Write(&b, binary.LittleEndian, []uint16{1, 1})
	binary.Write(&b, binary.LittleEndian, []uint32{byteRate, byteRate})
	binary.Write(&b, binary.LittleEndian, []uint16{1, 8})
	b.WriteString("LIST")
	binary.Write(&b, binary.LittleEndian, uint32(3))
	b.WriteString("abc\x00") // an odd-sized chunk and its pad byte
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, declared)
	b.Write(make([]byte, n))
	return b.Bytes()
}

// Hand-built files: what each format's rule says, including the files
// that understate their length in one place.
func TestAudioDurationRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want time.Duration
		err  error
	}{
		{"wav: the bytes present count", wavBytes(8000, 24000, 24000), 3 * time.Second, nil},
		{"wav: a data size of 0 (streamed)", wavBytes(8000, 24000, 0), 3 * time.Second, nil},
		{"wav: a data size that understates", wavBytes(8000, 24000, 80), 3 * time.Second, nil},
		{"wav: no byte rate", wavBytes(0, 100, 100), 0, ErrNoLength},
		{"ogg opus: the packets outlast the granule", oggOpus(150, 1, 0), 3 * time.Second, nil},
		{"ogg opus: the granule outlasts the packets", oggOpus(50, 960*3, 0), 3 * time.Second, nil},
		{"ogg opus: less the pre-skip", oggOpus(150, 960, 960), 2980 * time.Millisecond, nil},
		{"ogg: cut after the headers", oggOpus(0, 0, 0), 0, ErrNoLength},
		{"mp3: frames counted past a Xing count", mp3Frames(100, 10), span(100*1152, 44100), nil},
		{"mp3: a Xing count past the frames", mp3Frames(10, 100), span(100*1152, 44100), nil},
		{"mp4: stts outlasts mvhd", mp4Movie(1000, 1, 48000, 96000), 2 * time.Second, nil},
		{"mp4: mvhd outlasts the tracks", mp4Movie(1000, 5000, 48000, 48000), 5 * time.Second, nil},
		{"flac: no total", flacHeader(44100, 0), 0, ErrNoLength},
		{"flac", flacHeader(44100, 44100*7), 7 * time.Second, nil},
		{"webm: Duration", webmFile(1_000_000, 2500.0, nil), 2500 * time.Millisecond, nil},
		{"webm: blocks outlast Duration", webmFile(1_000_000, 10.0, []int16{0, 1000, 4000}), 4 * time.Second, nil},
		{"text", []byte("hello, this is not audio"), 0, ErrUnknownAudio},
		{"empty", nil, 0, ErrUnknownAudio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _, err := AudioDuration(bytes.NewReader(tc.data))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v (length %v)", err, tc.err, d)
				}
				return
			}
			if err != nil || (d-tc.want).Abs() > time.Millisecond {
				t.Fatalf("AudioDuration = %v, %v; want %v", d, err, tc.want)
			}
		})
	}
}

// A file larger than MaxProbeBytes is read no further: what its first
// MaxProbeBytes say is its length (a WAV's data counts up to there).
func TestAudioDurationReadsAtMostMaxProbeBytes(t *testing.T) {
	head := wavBytes(8000, 0, 0)
	r := &countingSource{head: head, left: 3 * MaxProbeBytes}
	d, _, err := AudioDuration(r)
	if err != nil {
		t.Fatal(err)
	}
	if r.read > MaxProbeBytes {
		t.Fatalf("read %d bytes, more than MaxProbeBytes (%d)", r.read, MaxProbeBytes)
	}
	want := span(float64(MaxProbeBytes-len(head)), 8000)
	if d != want {
		t.Fatalf("length %v, want %v", d, want)
	}
}

// countingSource yields head, then zeros until left is spent.
type countingSource struct {
	head       []byte
	left, read int
}

func (c *countingSource) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		c.read += n
		return n, nil
	}
	if c.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.left)
	clear(p[:n])
	c.left -= n
	c.read += n
	return n, nil
}

// BenchmarkAudioDuration reads the length of a 30-minute voice note
// (90,000 Opus packets, about 600 KB): every page is read.
func BenchmarkAudioDuration(b *testing.B) {
	data := oggOpus(90000, 960, 0)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := AudioDuration(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
