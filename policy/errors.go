package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kairos-agent/kairos"
)

// PosError is one problem of a policy file. File, Line and Col locate it
// (1-based, from goccy/go-yaml's token positions); they are empty/zero for
// problems found by Validate on a policy built in code.
type PosError struct {
	File string
	Line int
	Col  int
	Msg  string
}

// Error returns "file:line:col: message", or the bare message when the
// error has no position.
func (e PosError) Error() string {
	if e.Line <= 0 {
		if e.File != "" {
			return e.File + ": " + e.Msg
		}
		return e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Errors holds every problem found in a policy, ordered by position. It
// unwraps to a *kairos.Error with code EINVALID, so kairos.ErrorCode(err)
// is EINVALID and kairos.ErrorMessage(err) is the full list; use errors.As
// to get the individual PosErrors.
type Errors []PosError

// Error joins the problems, one per line.
func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, pe := range e {
		lines[i] = pe.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes the EINVALID application error.
func (e Errors) Unwrap() error {
	return &kairos.Error{Code: kairos.EINVALID, Message: e.Error()}
}

func (e Errors) sort() {
	sort.SliceStable(e, func(i, j int) bool {
		if e[i].Line != e[j].Line {
			return e[i].Line < e[j].Line
		}
		return e[i].Col < e[j].Col
	})
}

// suggest returns the candidate closest to s when it is close enough to be
// a likely typo ("clokc" → "clock"), or "".
func suggest(s string, candidates []string) string {
	ls := strings.ToLower(s)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := editDistance(ls, strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 1
	if len(ls) >= 5 {
		limit = 2
	}
	if len(ls) >= 12 {
		limit = 3
	}
	if best == "" || bestD > limit || bestD == 0 && s == best {
		return ""
	}
	return best
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and swaps of neighbours each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 20
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// didYouMean formats a suggestion suffix.
func didYouMean(s string, candidates []string) string {
	if c := suggest(s, candidates); c != "" {
		return fmt.Sprintf(", did you mean %q?", c)
	}
	return ""
}
