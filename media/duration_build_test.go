package media

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// Byte-built files for the rules of each format (duration_test.go).

func oggOpus(packets int, granulePer int64, preSkip uint16) []byte {
	return testkit.OggOpus(packets, granulePer, preSkip, 3)
}

// mp3Frames is a Xing frame that states xing frames, then counted frames
// (MPEG-1 layer III, 44.1 kHz, 128 kbit/s, mono: 417 bytes each).
func mp3Frames(counted, xing int) []byte {
	frame := func() []byte {
		f := make([]byte, 417)
		binary.BigEndian.PutUint32(f, 0xFFFB90C0)
		return f
	}
	tag := frame()
	copy(tag[4+17:], "Xing")
	binary.BigEndian.PutUint32(tag[4+17+4:], 1)
	binary.BigEndian.PutUint32(tag[4+17+8:], uint32(xing))
	out := append([]byte("ID3\x03\x00\x00\x00\x00\x00\x05hello"), tag...)
	for range counted {
		out = append(out, frame()...)
	}
	return append(out, []byte("TAG-an ID3v1 tag follows the audio")...)
}

func box(kind string, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
	return append(append(b, kind...), body...)
}

func u32(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// mp4Movie is an M4A whose mvhd states mvhdDur at mvhdTS, with one track
// whose mdhd states one second at trackTS and whose stts sums to sttsTotal.
func mp4Movie(mvhdTS, mvhdDur, trackTS, sttsTotal uint32) []byte {
	mvhd := box("mvhd", u32(0, 0, 0, mvhdTS, mvhdDur), make([]byte, 80))
	mdhd := box("mdhd", u32(0, 0, 0, trackTS, trackTS), make([]byte, 4))
	stts := box("stts", u32(0, 2, 1, sttsTotal/2, 1, sttsTotal-sttsTotal/2))
	trak := box("trak", box("tkhd", make([]byte, 84)), box("mdia", mdhd, box("hdlr", make([]byte, 25)), box("minf", box("stbl", stts))))
	return bytes.Join([][]byte{box("ftyp", []byte("M4A \x00\x00\x00\x00")), box("mdat", make([]byte, 3000)), box("moov", mvhd, trak)}, nil)
}

// flacHeader is a FLAC stream's STREAMINFO (mono, 16 bits).
func flacHeader(rate uint32, total uint64) []byte {
	b := []byte("fLaC\x80\x00\x00\x22\x10\x00\x10\x00\x00\x00\x00\x00\x00\x00")
	v := uint64(rate)<<44 | uint64(0)<<41 | uint64(15)<<36 | total
	b = binary.BigEndian.AppendUint64(b, v)
	return append(b, make([]byte, 16)...)
}

// ebml is one element with an 8-byte size (size < 0: unknown).
func ebml(id uint32, payload []byte, size int64) []byte {
	var b []byte
	for s := 24; s >= 0; s -= 8 {
		if byte(id>>s) != 0 || len(b) > 0 {
			b = append(b, byte(id>>s))
		}
	}
	if size < 0 {
		return append(append(b, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), payload...)
	}
	sz := binary.BigEndian.AppendUint64(nil, uint64(size))
	sz[0] = 0x01
	return append(append(b, sz...), payload...)
}

// webmFile is a streamed WebM: its Segment and Cluster of unknown size,
// Info with scale and duration (units), and a SimpleBlock per timecode.
func webmFile(scale uint64, duration float64, blocks []int16) []byte {
	doctype := ebml(0x4282, []byte("webm"), 4)
	header := ebml(0x1A45DFA3, doctype, int64(len(doctype)))
	info := bytes.Join([][]byte{
		ebml(ebmlTimecodeScale, binary.BigEndian.AppendUint64(nil, scale), 8),
		ebml(ebmlDuration, binary.BigEndian.AppendUint64(nil, math.Float64bits(duration)), 8),
	}, nil)
	seg := ebml(ebmlInfo, info, int64(len(info)))
	var cluster []byte
	cluster = append(cluster, ebml(ebmlTimecode, []byte{0}, 1)...)
	for _, tc := range blocks {
		blk := append([]byte{0x81}, binary.BigEndian.AppendUint16(nil, uint16(tc))...)
		blk = append(blk, 0x80, 1, 2, 3)
		cluster = append(cluster, ebml(ebmlSimpleBlock, blk, int64(len(blk)))...)
	}
	if len(blocks) > 0 {
		seg = append(seg, ebml(ebmlCluster, cluster, -1)...)
	}
	return append(header, ebml(ebmlSegment, seg, -1)...)
}
