package skill

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

// apply applies a unified diff to a (the hunks in order) and returns the
// result, or ok false when the diff does not fit a.
func apply(a []string, diff string) ([]string, bool) {
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return nil, false
	}
	var out []string
	pos := 0 // next line of a to copy
	for _, l := range lines[2:] {
		switch {
		case strings.HasPrefix(l, "@@ -"):
			f := strings.Fields(l)
			start, _ := strconv.Atoi(strings.Split(strings.TrimPrefix(f[1], "-"), ",")[0])
			if n := strings.Split(f[1], ","); len(n) == 2 && n[1] == "0" {
				start++ // an empty old range names the line before
			}
			if start-1 < pos || start-1 > len(a) {
				return nil, false
			}
			out = append(out, a[pos:start-1]...)
			pos = start - 1
		case strings.HasPrefix(l, " "), strings.HasPrefix(l, "-"):
			if pos >= len(a) || a[pos] != l[1:] {
				return nil, false
			}
			if l[0] == ' ' {
				out = append(out, a[pos])
			}
			pos++
		case strings.HasPrefix(l, "+"):
			out = append(out, l[1:])
		default:
			return nil, false
		}
	}
	return append(out, a[pos:]...), true
}

// FuzzUnifiedDiff: the diff of a and b applied to a gives b; equal inputs
// give no diff.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\nd\ne\nf\ng\nh", "a\nB\nc\nd\ne\nf\ng\nH\ni")
	f.Add("", "x")
	f.Add("x", "")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\ntwelve")
	f.Fuzz(func(t *testing.T, x, y string) {
		a, b := strings.Split(x, "\n"), strings.Split(y, "\n")
		if len(a) > 200 || len(b) > 200 {
			return
		}
		d := unifiedDiff("a", "b", a, b)
		if strings.Join(a, "\n") == strings.Join(b, "\n") {
			if d != "" {
				t.Fatalf("equal inputs gave a diff:\n%s", d)
			}
			return
		}
		for _, l := range append(a, b...) {
			if strings.Contains(l, "\r") {
				return
			}
		}
		got, ok := apply(a, d)
		if !ok || strings.Join(got, "\n") != strings.Join(b, "\n") {
			t.Fatalf("diff does not turn a into b (ok=%v):\na=%q\nb=%q\n%s\ngot=%q", ok, a, b, d, got)
		}
	})
}

// FuzzCheckInput: any input and schema give an input or an EINVALID
// error, never a panic; an accepted input is a JSON object.
func FuzzCheckInput(f *testing.F) {
	f.Add(`{"n":1}`, `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	f.Add(`[1]`, `{}`)
	f.Add(`{"n":"x"}`, `{"properties":{"n":{"type":["string","null"]}}}`)
	f.Add(``, `{"required":["a"]}`)
	f.Fuzz(func(t *testing.T, raw, schema string) {
		in, err := checkInput(json.RawMessage(raw), json.RawMessage(schema))
		if err != nil {
			if kairos.ErrorCode(err) != kairos.EINVALID {
				t.Fatalf("error %v", err)
			}
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(in, &m) != nil {
			t.Fatalf("accepted %q", in)
		}
	})
}
