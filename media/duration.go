package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"time"

	"github.com/kairos-agent/kairos"
)

// A recording's length, read from its own bytes: transcription is priced
// by the minute, and neither the length a client declares for a voice
// note nor the absence of one for audio sent as a file can be trusted.
// Each parser reads the file as a stream, once, with bounded memory
// (a page, a frame header or a box header at a time, never the file),
// and at most MaxProbeBytes of it. Where a format states its length in
// more than one place (a header and the packets or frames themselves),
// the larger wins: a file cannot buy a cheaper price by understating it
// in one of them.

// MaxProbeBytes bounds the bytes read to find a recording's length (the
// largest file a bot may download).
const MaxProbeBytes = kairos.MaxDownloadBytes

// maxLength is the longest length a parser reports; anything longer is
// clamped (it is refused under any cap all the same).
const maxLength = 1000 * time.Hour

// Errors of AudioDuration.
var (
	// ErrUnknownAudio: the bytes are none of the formats read here.
	ErrUnknownAudio = errors.New("not a recording in a format whose length can be read (Ogg, MP3, MP4/M4A, WAV, WebM, FLAC)")
	// ErrNoLength: the format is known but the file does not say how
	// long it is (damaged, cut short, or empty).
	ErrNoLength = errors.New("the recording does not say how long it is")
)

// AudioDuration reads the length of a recording from its bytes (Ogg with
// Opus, Vorbis, FLAC or Speex; MP3; MP4/M4A; WAV; WebM/Matroska; FLAC)
// and names its format. It reads at most MaxProbeBytes of r.
func AudioDuration(r io.Reader) (time.Duration, string, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, MaxProbeBytes), 64<<10)
	head, _ := br.Peek(12)
	if bytes.HasPrefix(head, []byte("ID3")) {
		if err := skipID3(br); err != nil {
			return 0, "mp3", ErrNoLength
		}
		head, _ = br.Peek(12)
	}
	var (
		d      time.Duration
		err    error
		format string
	)
	switch {
	case bytes.HasPrefix(head, []byte("OggS")):
		format = "ogg"
		d, err = oggDuration(br)
	case bytes.HasPrefix(head, []byte("fLaC")):
		format = "flac"
		d, err = flacDuration(br)
	case len(head) >= 12 && (bytes.Equal(head[:4], []byte("RIFF")) || bytes.Equal(head[:4], []byte("RF64")) || bytes.Equal(head[:4], []byte("BW64"))) && bytes.Equal(head[8:12], []byte("WAVE")):
		format = "wav"
		d, err = wavDuration(br)
	case len(head) >= 8 && bytes.Equal(head[4:8], []byte("ftyp")):
		format = "mp4"
		d, err = mp4Duration(br)
	case bytes.HasPrefix(head, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		format = "webm"
		d, err = webmDuration(br)
	case len(head) >= 4 && validMP3Header(binary.BigEndian.Uint32(head)):
		format = "mp3"
		d, err = mp3Duration(br)
	default:
		return 0, "", ErrUnknownAudio
	}
	if err == nil && d <= 0 {
		err = ErrNoLength
	}
	if err != nil {
		if !errors.Is(err, ErrNoLength) {
			err = errors.Join(ErrNoLength, err)
		}
		return 0, format, err
	}
	return min(d, maxLength), format, nil
}

// skipID3 skips an ID3v2 tag (MP3 and FLAC files may begin with one).
func skipID3(br *bufio.Reader) error {
	var h [10]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return err
	}
	size := int64(h[6]&0x7f)<<21 | int64(h[7]&0x7f)<<14 | int64(h[8]&0x7f)<<7 | int64(h[9]&0x7f)
	if h[5]&0x10 != 0 {
		size += 10 // a footer
	}
	return skip(br, size)
}

// skip discards n bytes; a stream that ends first is an error.
func skip(br *bufio.Reader, n int64) error {
	if n < 0 {
		return ErrNoLength
	}
	got, err := io.CopyN(io.Discard, br, n)
	if got < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// span is n units at rate units per second, clamped to maxLength.
func span(n, rate float64) time.Duration {
	if rate <= 0 || n <= 0 || math.IsNaN(n) || math.IsNaN(rate) {
		return 0
	}
	s := n / rate
	if s > maxLength.Seconds() || math.IsInf(s, 0) {
		return maxLength
	}
	return time.Duration(s * float64(time.Second))
}
