package testkit

import (
	"bytes"
	"encoding/binary"
	"time"
)

// Recordings built byte by byte, for the tests that need a file whose
// length can be read (transcription is priced by it) without an encoder.
// The packets hold no real sound: the fake transcriber does not listen.

// VoiceNote is an Ogg/Opus voice note of length d (20 ms packets), padded
// to about size bytes (at least what its packets take).
func VoiceNote(d time.Duration, size int) []byte {
	packets := int(d / (20 * time.Millisecond))
	payload := 3
	if packets > 0 && size > 0 {
		payload = max(3, (size-100)/packets)
	}
	return OggOpus(packets, 960, 0, payload)
}

// OggOpus is an Ogg/Opus stream: the two header pages, then packets
// 20 ms CELT packets of payload bytes each, 10 to a page; each page's
// granule position is granulePer per packet so far (960 is true to the
// packets; another value makes the granule understate or overstate the
// length). preSkip is the OpusHead's.
func OggOpus(packets int, granulePer int64, preSkip uint16, payload int) []byte {
	var out bytes.Buffer
	head := []byte("OpusHead\x01\x01")
	head = binary.LittleEndian.AppendUint16(head, preSkip)
	head = binary.LittleEndian.AppendUint32(head, 48000)
	head = append(head, 0, 0, 0)
	seq := uint32(0)
	page := func(flags byte, granule int64, pkts [][]byte) {
		var laces, body []byte
		for _, p := range pkts {
			n := len(p)
			for n >= 255 {
				laces = append(laces, 255)
				n -= 255
			}
			laces = append(laces, byte(n))
			body = append(body, p...)
		}
		h := []byte("OggS\x00")
		h = append(h, flags)
		h = binary.LittleEndian.AppendUint64(h, uint64(granule))
		h = binary.LittleEndian.AppendUint32(h, 0x4b41) // serial
		h = binary.LittleEndian.AppendUint32(h, seq)
		h = append(h, 0, 0, 0, 0, byte(len(laces)))
		h = append(h, laces...)
		pg := append(h, body...)
		binary.LittleEndian.PutUint32(pg[22:26], oggCRC(pg))
		out.Write(pg)
		seq++
	}
	page(2, 0, [][]byte{head})
	flags := byte(0)
	if packets == 0 {
		flags = 4
	}
	page(flags, 0, [][]byte{[]byte("OpusTags\x00\x00\x00\x00\x00\x00\x00\x00")})
	pkt := make([]byte, max(payload, 1))
	pkt[0] = 31 << 3 // CELT fullband 20 ms, one frame
	for done := 0; done < packets; {
		n := min(10, packets-done)
		pkts := make([][]byte, n)
		for i := range pkts {
			pkts[i] = pkt
		}
		done += n
		flags := byte(0)
		if done == packets {
			flags = 4
		}
		page(flags, int64(done)*granulePer, pkts)
	}
	return out.Bytes()
}

// oggCRC is the Ogg page checksum (CRC-32, polynomial 0x04c11db7, not
// reflected, over the page with its checksum field zeroed).
func oggCRC(page []byte) uint32 {
	var crc uint32
	for _, b := range page {
		crc ^= uint32(b) << 24
		for range 8 {
			if crc&0x80000000 != 0 {
				crc = crc<<1 ^ 0x04c11db7
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
