package kairos

import (
	"crypto/rand"
	"fmt"
)

// NewID returns a random UUID (version 4, RFC 9562), the form of every
// stored row id and of cell, checkpoint and code-job ids.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
