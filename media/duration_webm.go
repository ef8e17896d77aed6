package media

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"time"
)

// WebM and Matroska (EBML): the Segment's Info states a Duration in
// units of its TimecodeScale (nanoseconds per unit, 1,000,000 by
// default). Recorders that stream (a browser's MediaRecorder) leave it
// out, and it could understate, so the blocks are read too: each
// Cluster's Timecode plus its blocks' relative timecodes (and a
// BlockGroup's BlockDuration) gives the end of the audio. The larger
// wins. The Segment, Clusters and BlockGroups are read as one flat run of
// elements (their sizes may be unknown while streaming); every other
// element is skipped.

const (
	ebmlSegment        = 0x18538067
	ebmlInfo           = 0x1549A966
	ebmlTimecodeScale  = 0x2AD7B1
	ebmlDuration       = 0x4489
	ebmlCluster        = 0x1F43B675
	ebmlTimecode       = 0xE7
	ebmlSimpleBlock    = 0xA3
	ebmlBlockGroup     = 0xA0
	ebmlBlock          = 0xA1
	ebmlBlockDuration  = 0x9B
	ebmlUnknownSizeTag = -1
)

// webmFlat are the elements whose children are read in the same run.
var webmFlat = map[uint32]bool{ebmlSegment: true, ebmlInfo: true, ebmlCluster: true, ebmlBlockGroup: true}

type webmState struct {
	scale    uint64  // ns per timecode unit
	duration float64 // Info's Duration, in units
	cluster  int64   // the current cluster's timecode
	block    int64   // the current block group's block timecode
	end      int64   // the latest end of a block, in units
	blocks   bool
}

func webmDuration(br *bufio.Reader) (time.Duration, error) {
	st := &webmState{scale: 1_000_000}
	for {
		id, err := ebmlID(br)
		if err != nil {
			break
		}
		size, err := ebmlSize(br)
		if err != nil {
			break
		}
		if webmFlat[id] {
			continue
		}
		if size == ebmlUnknownSizeTag {
			break // only the flat elements may have an unknown size
		}
		if err := st.element(br, id, size); err != nil {
			break
		}
	}
	units := max(st.duration, float64(st.end))
	if units <= 0 || (!st.blocks && st.duration <= 0) {
		return 0, ErrNoLength
	}
	return span(units*float64(st.scale), 1e9), nil
}

// element reads one element of interest and skips the others.
func (st *webmState) element(br *bufio.Reader, id uint32, size int64) error {
	switch id {
	case ebmlTimecodeScale, ebmlTimecode, ebmlBlockDuration, ebmlDuration:
		if size > 8 {
			return skip(br, size)
		}
		var b [8]byte
		if _, err := io.ReadFull(br, b[8-size:]); err != nil {
			return err
		}
		v := binary.BigEndian.Uint64(b[:])
		switch id {
		case ebmlTimecodeScale:
			if v > 0 {
				st.scale = v
			}
		case ebmlTimecode:
			st.cluster = int64(min(v, math.MaxInt32))
		case ebmlBlockDuration:
			st.end = max(st.end, st.block+int64(min(v, math.MaxInt32)))
		case ebmlDuration:
			f := 0.0
			if size == 4 {
				f = float64(math.Float32frombits(uint32(v)))
			} else if size == 8 {
				f = math.Float64frombits(v)
			}
			if f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f) {
				st.duration = min(f, 1e15)
			}
		}
		return nil
	case ebmlSimpleBlock, ebmlBlock:
		return st.blockHeader(br, size)
	}
	return skip(br, size)
}

// blockHeader reads a block's track number and relative timecode and
// skips its frames.
func (st *webmState) blockHeader(br *bufio.Reader, size int64) error {
	first, err := br.Peek(1)
	if err != nil {
		return err
	}
	n := int64(vintLen(first[0]))
	if n == 0 || size < n+2 {
		return skip(br, size)
	}
	if err := skip(br, n); err != nil {
		return err
	}
	var tc [2]byte
	if _, err := io.ReadFull(br, tc[:]); err != nil {
		return err
	}
	st.block = st.cluster + int64(int16(binary.BigEndian.Uint16(tc[:])))
	st.end = max(st.end, st.block)
	st.blocks = true
	return skip(br, size-n-2)
}

// vintLen is the length of an EBML variable-length integer from its
// first byte (0: invalid).
func vintLen(b byte) int {
	for i := 0; i < 8; i++ {
		if b&(0x80>>i) != 0 {
			return i + 1
		}
	}
	return 0
}

// ebmlID reads an element ID (its marker bits kept, up to 4 bytes).
func ebmlID(br *bufio.Reader) (uint32, error) {
	b, err := br.ReadByte()
	if err != nil {
		return 0, err
	}
	n := vintLen(b)
	if n == 0 || n > 4 {
		return 0, ErrNoLength
	}
	id := uint32(b)
	for range n - 1 {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		id = id<<8 | uint32(c)
	}
	return id, nil
}

// ebmlSize reads an element's size (ebmlUnknownSizeTag when all its
// value bits are ones).
func ebmlSize(br *bufio.Reader) (int64, error) {
	b, err := br.ReadByte()
	if err != nil {
		return 0, err
	}
	n := vintLen(b)
	if n == 0 {
		return 0, ErrNoLength
	}
	v := uint64(b & (0xff >> n))
	ones := v == uint64(0xff>>n)
	for range n - 1 {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		v = v<<8 | uint64(c)
		ones = ones && c == 0xff
	}
	if ones {
		return ebmlUnknownSizeTag, nil
	}
	if v > math.MaxInt64/2 {
		return 0, ErrNoLength
	}
	return int64(v), nil
}
