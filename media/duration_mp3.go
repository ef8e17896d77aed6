package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"time"
)

// MP3 (MPEG-1, -2 and 2.5, layers I to III): the frames are counted, each
// a fixed number of samples. A VBR file's first frame may be a Xing/Info
// or VBRI tag that states the number of frames; the larger of the stated
// and the counted number wins. Bytes between frames that are not a frame
// (a damaged stretch) are skipped to the next frame of the same stream;
// an ID3v1 tag ends the audio.

// mp3Frame is what a frame header says.
type mp3Frame struct {
	version int // 1, 2, or 25 (MPEG-2.5)
	layer   int // 1, 2, 3
	rate    int // samples per second
	samples int // per frame
	size    int // bytes, header included; 0: free format (unknown)
	mono    bool
}

var (
	mp3Rates = map[int][3]int{1: {44100, 48000, 32000}, 2: {22050, 24000, 16000}, 25: {11025, 12000, 8000}}
	// kbit/s by [MPEG-1?][layer-1][index]
	mp3Bitrates = [2][3][16]int{
		{ // MPEG-2 and 2.5
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, 0},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
		},
		{ // MPEG-1
			{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 0},
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 0},
			{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},
		},
	}
)

// parseMP3Header reads a 4-byte frame header (ok false when it is none).
func parseMP3Header(h uint32) (f mp3Frame, ok bool) {
	if h>>21 != 0x7ff {
		return f, false
	}
	switch (h >> 19) & 3 {
	case 0:
		f.version = 25
	case 2:
		f.version = 2
	case 3:
		f.version = 1
	default:
		return f, false
	}
	f.layer = 4 - int((h>>17)&3)
	br, ri := int((h>>12)&0xf), int((h>>10)&3)
	if f.layer == 4 || br == 15 || ri == 3 {
		return f, false
	}
	f.rate = mp3Rates[f.version][ri]
	f.mono = (h>>6)&3 == 3
	pad := int((h >> 9) & 1)
	mpeg1 := 0
	if f.version == 1 {
		mpeg1 = 1
	}
	kbps := mp3Bitrates[mpeg1][f.layer-1][br]
	switch {
	case f.layer == 1:
		f.samples = 384
		f.size = (12*kbps*1000/f.rate + pad) * 4
	case f.layer == 3 && f.version != 1:
		f.samples = 576
		f.size = 72*kbps*1000/f.rate + pad
	default:
		f.samples = 1152
		f.size = 144*kbps*1000/f.rate + pad
	}
	if kbps == 0 {
		f.size = 0
	}
	return f, true
}

func validMP3Header(h uint32) bool {
	f, ok := parseMP3Header(h)
	return ok && f.size > 0
}

// sameStream reports whether g is a frame of the stream f began.
func (f mp3Frame) sameStream(g mp3Frame) bool {
	return f.version == g.version && f.layer == g.layer && f.rate == g.rate
}

func mp3Duration(br *bufio.Reader) (time.Duration, error) {
	head, err := br.Peek(4)
	if err != nil {
		return 0, ErrNoLength
	}
	first, ok := parseMP3Header(binary.BigEndian.Uint32(head))
	if !ok || first.size == 0 {
		return 0, ErrNoLength
	}
	stated, counted := int64(0), int64(0)
	if b, err := br.Peek(min(first.size, 192)); err == nil {
		if n, ok := mp3Tag(first, b); ok {
			stated = n
			counted-- // the tag's frame is silence, not audio
		}
	}
	for {
		head, err := br.Peek(4)
		if err != nil {
			break
		}
		f, ok := parseMP3Header(binary.BigEndian.Uint32(head))
		if !ok || f.size == 0 || !first.sameStream(f) {
			if bytes.Equal(head[:3], []byte("TAG")) || !resyncMP3(br, first) {
				break
			}
			continue
		}
		if skip(br, int64(f.size)) != nil {
			break // a cut-short last frame
		}
		counted++
	}
	return span(float64(max(stated, counted)*int64(first.samples)), float64(first.rate)), nil
}

// mp3Tag reads the frame count of a Xing/Info or VBRI tag in the first
// frame b.
func mp3Tag(f mp3Frame, b []byte) (int64, bool) {
	side := 32
	switch {
	case f.version == 1 && f.mono:
		side = 17
	case f.version != 1 && !f.mono:
		side = 17
	case f.version != 1:
		side = 9
	}
	if o := 4 + side; len(b) >= o+12 && (bytes.Equal(b[o:o+4], []byte("Xing")) || bytes.Equal(b[o:o+4], []byte("Info"))) {
		if flags := binary.BigEndian.Uint32(b[o+4 : o+8]); flags&1 != 0 {
			return int64(binary.BigEndian.Uint32(b[o+8 : o+12])), true
		}
		return 0, true
	}
	if len(b) >= 36+18 && bytes.Equal(b[36:40], []byte("VBRI")) {
		return int64(binary.BigEndian.Uint32(b[36+14 : 36+18])), true
	}
	return 0, false
}

// resyncMP3 skips to the next frame header of first's stream; false at
// the end.
func resyncMP3(br *bufio.Reader, first mp3Frame) bool {
	if _, err := br.Discard(1); err != nil {
		return false
	}
	for {
		b, _ := br.Peek(4096)
		if len(b) < 4 {
			return false
		}
		i := bytes.IndexByte(b, 0xff)
		switch {
		case i < 0:
			br.Discard(len(b))
			continue
		case i+4 > len(b):
			if len(b) < 4096 {
				return false
			}
			br.Discard(i)
			continue
		}
		if f, ok := parseMP3Header(binary.BigEndian.Uint32(b[i:])); ok && f.size > 0 && first.sameStream(f) {
			br.Discard(i)
			return true
		}
		br.Discard(i + 1)
	}
}
