package media

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"time"
)

// MP4 and M4A (ISO BMFF; Telegram's video notes too): the movie header
// (mvhd) states the length at its timescale, each track's media header
// (mdhd) the track's, and each track's time-to-sample table (stts) sums
// its samples' durations. The largest wins. Boxes are read one header at
// a time; the media data (mdat, wherever it lies) is skipped.

// mp4Containers are the boxes whose children are read.
var mp4Containers = map[string]bool{"moov": true, "trak": true, "mdia": true, "minf": true, "stbl": true, "mvex": true}

// mp4State is what the boxes said so far.
type mp4State struct {
	longest   time.Duration
	timescale uint32 // the current track's (mdhd comes before stbl)
	movie     uint32 // the movie header's
	found     bool
}

func (st *mp4State) saw(n uint64, timescale uint32) {
	if timescale == 0 {
		return
	}
	st.found = true
	st.longest = max(st.longest, span(float64(n), float64(timescale)))
}

func mp4Duration(br *bufio.Reader) (time.Duration, error) {
	st := &mp4State{}
	err := mp4Boxes(br, st, math.MaxInt64, 0)
	if !st.found {
		return 0, ErrNoLength
	}
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return 0, err
	}
	return st.longest, nil
}

// mp4Boxes reads the boxes of one container (limit bytes, MaxInt64 at
// the top level, where the file's end ends it).
func mp4Boxes(br *bufio.Reader, st *mp4State, limit int64, depth int) error {
	for limit > 0 {
		var h [8]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return err
		}
		size, kind, hdr := int64(binary.BigEndian.Uint32(h[:4])), string(h[4:8]), int64(8)
		switch size {
		case 1:
			var l [8]byte
			if _, err := io.ReadFull(br, l[:]); err != nil {
				return err
			}
			size, hdr = int64(binary.BigEndian.Uint64(l[:])), 16
		case 0:
			size = limit // to the end of the container (or file)
			if limit == math.MaxInt64 {
				size = math.MaxInt64 - 1
			}
		}
		if size < hdr || size > limit {
			return ErrNoLength
		}
		body := size - hdr
		limit -= size
		var err error
		switch {
		case mp4Containers[kind] && depth < 8:
			err = mp4Boxes(br, st, body, depth+1)
		case kind == "mvhd" || kind == "mdhd" || kind == "mehd":
			err = mp4Header(br, st, kind, body)
		case kind == "stts":
			err = mp4Stts(br, st, body)
		default:
			err = skip(br, body)
			if err != nil && size >= math.MaxInt64-1 {
				err = nil // a last box that runs to the end of the file
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mp4Header reads mvhd, mdhd (timescale and duration, version 0 or 1)
// or mehd (a fragmented movie's duration, at the movie's timescale).
func mp4Header(br *bufio.Reader, st *mp4State, kind string, body int64) error {
	var b [32]byte
	want := int64(4 + 8 + 4 + 8) // version 1
	if kind == "mehd" {
		want = 4 + 8
	}
	n := min(body, int64(len(b)), want)
	if _, err := io.ReadFull(br, b[:n]); err != nil {
		return err
	}
	if err := skip(br, body-n); err != nil {
		return err
	}
	v1 := b[0] == 1
	switch {
	case kind == "mehd" && v1 && n >= 12:
		st.saw(binary.BigEndian.Uint64(b[4:12]), st.movieScale())
	case kind == "mehd" && n >= 8:
		st.saw(uint64(binary.BigEndian.Uint32(b[4:8])), st.movieScale())
	case v1 && n >= 32:
		ts := binary.BigEndian.Uint32(b[20:24])
		st.header(kind, ts, binary.BigEndian.Uint64(b[24:32]))
	case !v1 && n >= 20:
		ts := binary.BigEndian.Uint32(b[12:16])
		st.header(kind, ts, uint64(binary.BigEndian.Uint32(b[16:20])))
	}
	return nil
}

// movieScale is the movie header's timescale (mehd counts in it).
func (st *mp4State) movieScale() uint32 { return st.movie }

func (st *mp4State) header(kind string, ts uint32, d uint64) {
	if kind == "mvhd" {
		st.movie = ts
	} else {
		st.timescale = ts
	}
	if d != math.MaxUint32 && d != math.MaxUint64 { // all ones: unknown
		st.saw(d, ts)
	}
}

// mp4Stts sums a time-to-sample table (entries of count and delta).
func mp4Stts(br *bufio.Reader, st *mp4State, body int64) error {
	var h [8]byte
	if body < 8 {
		return skip(br, body)
	}
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return err
	}
	body -= 8
	entries := min(int64(binary.BigEndian.Uint32(h[4:8])), body/8)
	var total uint64
	var e [8]byte
	for range entries {
		if _, err := io.ReadFull(br, e[:]); err != nil {
			return err
		}
		c, d := uint64(binary.BigEndian.Uint32(e[:4])), uint64(binary.BigEndian.Uint32(e[4:]))
		if d != 0 && c > (math.MaxUint64-total)/d {
			total = math.MaxUint64
		} else {
			total += c * d
		}
	}
	st.saw(total, st.timescale)
	return skip(br, body-entries*8)
}
