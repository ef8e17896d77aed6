package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"time"
)

// Ogg (RFC 3533): a chain of pages, each with the granule position of
// its last completed packet. The length of the first logical stream is
// its last granule position at its codec's rate: samples at 48 kHz less
// the pre-skip for Opus (RFC 7845), samples at the stream's rate for
// Vorbis, FLAC and Speex. For Opus the packets' own durations (their TOC
// bytes, RFC 6716 §3.1) are summed too, and the larger length wins.

// oggCodec is what the first stream holds.
type oggCodec struct {
	name    string
	rate    float64
	preSkip int64
}

// oggState follows the first stream's pages.
type oggState struct {
	serial   uint32
	codec    oggCodec
	granule  int64 // the last granule position seen, -1 before any
	packets  int   // packets completed (Opus: the first two are headers)
	samples  int64 // Opus: samples of the audio packets, at 48 kHz
	midPacke bool  // the last page ended inside a packet
}

func oggDuration(br *bufio.Reader) (time.Duration, error) {
	st := oggState{granule: -1}
	var hdr [27]byte
	var lace [255]byte
	body := make([]byte, 0, 255*255)
	for first := true; ; first = false {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if first {
				return 0, ErrNoLength
			}
			break // the end (or a cut-short last page: what came before counts)
		}
		if !bytes.Equal(hdr[:4], []byte("OggS")) || hdr[4] != 0 {
			if first {
				return 0, ErrNoLength
			}
			break // not a page: trailing bytes
		}
		n := int(hdr[26])
		if _, err := io.ReadFull(br, lace[:n]); err != nil {
			break
		}
		size := 0
		for _, l := range lace[:n] {
			size += int(l)
		}
		serial := binary.LittleEndian.Uint32(hdr[14:18])
		if !first && serial != st.serial {
			if skip(br, int64(size)) != nil {
				break
			}
			continue
		}
		body = body[:size]
		if _, err := io.ReadFull(br, body); err != nil {
			break
		}
		if first {
			st.serial = serial
			c, err := oggIdentify(body[:min(size, int(lace[0]))])
			if err != nil || n == 0 {
				return 0, errors.Join(ErrNoLength, err)
			}
			st.codec = c
		}
		st.page(lace[:n], body, hdr[5]&1 != 0)
		if g := int64(binary.LittleEndian.Uint64(hdr[6:14])); g >= 0 {
			st.granule = g // -1 (all bits set): no packet ends on this page
		}
	}
	return st.length()
}

// page follows the packets of one page of the first stream.
func (st *oggState) page(laces, body []byte, continued bool) {
	off := 0
	start := !continued || !st.midPacke
	for _, l := range laces {
		if start && st.codec.name == "opus" && st.packets >= 2 {
			st.samples += opusPacketSamples(body[off : off+int(l)])
		}
		off += int(l)
		start = l < 255
		if start {
			st.packets++
		}
	}
	st.midPacke = len(laces) > 0 && laces[len(laces)-1] == 255
}

func (st *oggState) length() (time.Duration, error) {
	c := st.codec
	total := st.granule
	if c.name == "opus" {
		total = max(total, st.samples)
	}
	if total < 0 {
		return 0, ErrNoLength
	}
	return span(float64(total-c.preSkip), c.rate), nil
}

// oggIdentify reads the codec from the first packet of a stream.
func oggIdentify(p []byte) (oggCodec, error) {
	switch {
	case len(p) >= 19 && bytes.HasPrefix(p, []byte("OpusHead")):
		return oggCodec{name: "opus", rate: 48000, preSkip: int64(binary.LittleEndian.Uint16(p[10:12]))}, nil
	case len(p) >= 16 && bytes.HasPrefix(p, []byte("\x01vorbis")):
		return oggCodec{name: "vorbis", rate: float64(binary.LittleEndian.Uint32(p[12:16]))}, nil
	case len(p) >= 13+4+34 && bytes.HasPrefix(p, []byte("\x7fFLAC")) && bytes.Equal(p[9:13], []byte("fLaC")):
		rate, _ := streamInfo(p[17:])
		return oggCodec{name: "flac", rate: float64(rate)}, nil
	case len(p) >= 40 && bytes.HasPrefix(p, []byte("Speex   ")):
		return oggCodec{name: "speex", rate: float64(binary.LittleEndian.Uint32(p[36:40]))}, nil
	}
	return oggCodec{}, errors.New("an Ogg stream of an unknown codec")
}

// opusFrameSamples is the frame size (samples at 48 kHz) of each of the
// 32 configurations of an Opus TOC byte.
var opusFrameSamples = [32]int64{
	480, 960, 1920, 2880, 480, 960, 1920, 2880, 480, 960, 1920, 2880, // SILK: 10, 20, 40, 60 ms
	480, 960, 480, 960, // Hybrid: 10, 20 ms
	120, 240, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960, // CELT: 2.5, 5, 10, 20 ms
}

// opusPacketSamples is the length of one Opus packet at 48 kHz from its
// first bytes (0 for an empty or malformed one).
func opusPacketSamples(p []byte) int64 {
	if len(p) == 0 {
		return 0
	}
	frames := int64(1)
	switch p[0] & 3 {
	case 1, 2:
		frames = 2
	case 3:
		if len(p) < 2 {
			return 0
		}
		frames = int64(p[1] & 0x3f)
	}
	n := frames * opusFrameSamples[p[0]>>3]
	return min(n, 5760) // a packet holds at most 120 ms
}
