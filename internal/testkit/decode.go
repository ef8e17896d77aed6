package testkit

import (
	"strconv"
	"strings"
)

// Decodings undoes the transforms a code cell could apply to a secret
// before printing it, so a test can look for the secret in each form: s
// itself, reversed, rot13, its decimal numbers read as character codes
// (plain and XORed with xorKey), and s without line breaks, spaces and
// quotes (one character per line).
func Decodings(s string, xorKey byte) []string {
	rev := []rune(s)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	rot := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
	var codes, xored strings.Builder
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		if n, err := strconv.Atoi(f); err == nil && n < 256 {
			codes.WriteByte(byte(n))
			xored.WriteByte(byte(n) ^ xorKey)
		}
	}
	compact := strings.NewReplacer("\n", "", "\\n", "", " ", "", "\"", "").Replace(s)
	return []string{s, string(rev), rot, codes.String(), xored.String(), compact}
}
