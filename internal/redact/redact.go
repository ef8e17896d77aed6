// Package redact scrubs secret values from text: logs, cell output,
// results, whatever could carry them out.
package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

// Redacted is what a scrubbed secret becomes.
const Redacted = "[REDACTED]"

// Redaction rule (sandbox outputs, logs, anything that may carry a secret):
//
//   - Secrets shorter than MinSecretLen bytes are ignored (they would
//     redact ordinary words).
//   - Every secret is searched in its raw form and in its encodings:
//     base64 (standard and URL alphabets, padded and unpadded, and the
//     characters of the encoding that depend on the secret alone when it
//     sits at any byte offset inside a longer encoded text), hex (lower and
//     upper case) and URL encoding (query and path escaping).
//   - Chunks: any ChunkLen-byte window of a secret's raw form found in the
//     text is redacted too, so printing a secret in pieces leaks at most
//     ChunkLen-1 bytes per piece.
//   - Splits: the search is repeated on the text with whitespace, quotes,
//     commas, semicolons, plus signs and pipes removed, so a secret printed
//     in pieces on separate lines or joined with such separators is found
//     as a whole, and the whole span it covers in the original text
//     (separators included) is redacted.
//
// Overlapping and adjacent matches are merged into one [REDACTED].
const (
	MinSecretLen = 5
	ChunkLen     = 8
)

// Redactor scrubs known secret values out of text. It is safe for
// concurrent use; build it once per set of secrets.
type Redactor struct {
	needles []string            // whole forms, longest first
	grams   map[string]struct{} // ChunkLen-byte windows of raw secrets
	whole   bool                // whole forms only (NewLogRedactor)
}

// NewLog is NewRedactor for log lines: a secret is masked where
// its whole value, or a whole encoding of it, appears; not where eight of
// its bytes happen to (a run of digits like the bot id's, an id, a
// version list). Logs hold the host's own error texts, not the
// adversarial splits a cell's output may.
func NewLog(secrets []string) *Redactor {
	r := New(secrets)
	r.grams, r.whole = nil, true
	return r
}

// New returns a Redactor for the given secret values.
func New(secrets []string) *Redactor {
	r := &Redactor{grams: map[string]struct{}{}}
	seen := map[string]bool{}
	add := func(s string) {
		if len(s) >= MinSecretLen && !seen[s] {
			seen[s] = true
			r.needles = append(r.needles, s)
		}
	}
	for _, s := range secrets {
		if len(s) < MinSecretLen {
			continue
		}
		b := []byte(s)
		add(s)
		add(base64.StdEncoding.EncodeToString(b))
		add(base64.RawStdEncoding.EncodeToString(b))
		add(base64.URLEncoding.EncodeToString(b))
		add(base64.RawURLEncoding.EncodeToString(b))
		for shift := 0; shift <= 2; shift++ {
			add(shiftedBase64(b, shift, base64.RawStdEncoding))
			add(shiftedBase64(b, shift, base64.RawURLEncoding))
		}
		add(hex.EncodeToString(b))
		add(strings.ToUpper(hex.EncodeToString(b)))
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		if len(s) > ChunkLen {
			for i := 0; i+ChunkLen <= len(s); i++ {
				r.grams[s[i:i+ChunkLen]] = struct{}{}
			}
		}
	}
	sort.Slice(r.needles, func(i, j int) bool { return len(r.needles[i]) > len(r.needles[j]) })
	return r
}

// ForSecrets is NewRedactor over the values of a name→value map of
// secrets (KAIROS_SECRET_<NAME>), the shape every tool is handed.
func ForSecrets(secrets map[string]string) *Redactor {
	values := make([]string, 0, len(secrets))
	for _, v := range secrets {
		if v != "" {
			values = append(values, v)
		}
	}
	return New(values)
}

// SecretNames lists, sorted, the names of the secrets that have a name
// and a value: what a cell may ask for.
func SecretNames(secrets map[string]string) []string {
	var names []string
	for k, v := range secrets {
		if k != "" && v != "" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

// shiftedBase64 returns the characters of the base64 encoding of secret,
// placed shift bytes into a longer text, that depend on the secret alone.
func shiftedBase64(secret []byte, shift int, enc *base64.Encoding) string {
	buf := make([]byte, shift+len(secret))
	copy(buf[shift:], secret)
	s := enc.EncodeToString(buf)
	from := (8*shift + 5) / 6
	to := 8 * (shift + len(secret)) / 6
	if to > len(s) {
		to = len(s)
	}
	if from >= to {
		return ""
	}
	return s[from:to]
}

// Empty reports whether the Redactor has nothing to redact.
func (r *Redactor) Empty() bool { return r == nil || len(r.needles) == 0 }

// Scrub returns s with every secret form replaced by [REDACTED].
func (r *Redactor) Scrub(s string) string {
	if r.Empty() || s == "" {
		return s
	}
	marks := make([]bool, len(s))
	any := r.mark(s, nil, marks)
	// The same search on the text without separators, mapped back.
	compact, index := compactText(s)
	if !r.whole && len(compact) != len(s) && r.mark(compact, index, marks) {
		any = true
	}
	if !any {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if !marks[i] {
			j := i
			for j < len(s) && !marks[j] {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		for i < len(s) && marks[i] {
			i++
		}
		b.WriteString(Redacted)
	}
	return b.String()
}

// mark sets marks for every match in t; index maps t's bytes to s's bytes
// (nil when t is s). A span in t marks everything between the original
// positions of its first and last bytes.
func (r *Redactor) mark(t string, index []int, marks []bool) bool {
	found := false
	set := func(from, to int) { // [from, to) in t
		found = true
		a, b := from, to-1
		if index != nil {
			a, b = index[a], index[b]
		}
		for k := a; k <= b; k++ {
			marks[k] = true
		}
	}
	for _, n := range r.needles {
		for off := 0; ; {
			i := strings.Index(t[off:], n)
			if i < 0 {
				break
			}
			set(off+i, off+i+len(n))
			off += i + 1
		}
	}
	if len(r.grams) > 0 {
		for i := 0; i+ChunkLen <= len(t); i++ {
			if _, ok := r.grams[t[i:i+ChunkLen]]; ok {
				set(i, i+ChunkLen)
			}
		}
	}
	return found
}

func isSeparator(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', ',', ';', '+', '|':
		return true
	}
	return false
}

// compactText drops separator bytes and returns the original index of
// every kept byte.
func compactText(s string) (string, []int) {
	var b strings.Builder
	index := make([]int, 0, len(s))
	for i := 0; i < len(s); i++ {
		if isSeparator(s[i]) {
			continue
		}
		b.WriteByte(s[i])
		index = append(index, i)
	}
	return b.String(), index
}

// ScrubJSON scrubs a JSON text. When replacing a secret broke the JSON
// (a secret that spanned an escape), the scrubbed text is returned as a
// JSON string instead, so the result is always valid JSON.
func (r *Redactor) ScrubJSON(js json.RawMessage) json.RawMessage {
	if len(js) == 0 {
		return js
	}
	s := r.Scrub(string(js))
	if s == string(js) || json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}
