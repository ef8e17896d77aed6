package media

import (
	"bufio"
	"encoding/binary"
	"io"
	"time"
)

// WAV (RIFF, RF64, BW64): the audio is the data chunk, at the fmt
// chunk's byte rate. The data chunk's own size is not trusted (streamed
// WAVs leave it 0 or 0xFFFFFFFF, and a smaller one would understate): the
// bytes present after its header count, to the end of the file.

func wavDuration(br *bufio.Reader) (time.Duration, error) {
	if skip(br, 12) != nil {
		return 0, ErrNoLength
	}
	var byteRate uint32
	var h [8]byte
	for {
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return 0, ErrNoLength // no data chunk
		}
		id, size := string(h[:4]), int64(binary.LittleEndian.Uint32(h[4:8]))
		switch id {
		case "fmt ":
			if size < 16 {
				return 0, ErrNoLength
			}
			var f [16]byte
			if _, err := io.ReadFull(br, f[:]); err != nil {
				return 0, ErrNoLength
			}
			byteRate = binary.LittleEndian.Uint32(f[8:12])
			if skip(br, size-16+size&1) != nil {
				return 0, ErrNoLength
			}
		case "data":
			if byteRate == 0 {
				return 0, ErrNoLength // the format comes first
			}
			n, err := io.Copy(io.Discard, br)
			if err != nil {
				return 0, err
			}
			return span(float64(n), float64(byteRate)), nil
		default:
			if skip(br, size+size&1) != nil {
				return 0, ErrNoLength
			}
		}
	}
}

// FLAC: the STREAMINFO block, first of the metadata, holds the sample
// rate and the total number of samples (0: unknown).

func flacDuration(br *bufio.Reader) (time.Duration, error) {
	var h [4 + 4 + 34]byte
	if _, err := io.ReadFull(br, h[:]); err != nil || h[4]&0x7f != 0 {
		return 0, ErrNoLength
	}
	rate, total := streamInfo(h[8:])
	if rate == 0 || total == 0 {
		return 0, ErrNoLength
	}
	return span(float64(total), float64(rate)), nil
}

// streamInfo reads the sample rate and total samples of a FLAC
// STREAMINFO block (34 bytes).
func streamInfo(b []byte) (rate uint32, total uint64) {
	if len(b) < 18 {
		return 0, 0
	}
	rate = uint32(b[10])<<12 | uint32(b[11])<<4 | uint32(b[12])>>4
	total = uint64(b[13]&0x0f)<<32 | uint64(binary.BigEndian.Uint32(b[14:18]))
	return rate, total
}
