package cell

import (
	"slices"
	"sort"
	"strings"
)

// Usage is what a piece of JavaScript may do, found by a static scan of
// its text (see Scan).
type Usage struct {
	Network      bool     // calls getJSON, postJSON, fetchWithAuth or fetch
	NetworkWrite bool     // may send a request other than GET/HEAD
	Secrets      bool     // reads a secret: getSecret, authSecret, or a getJSON/postJSON auth argument
	SecretNames  []string // secret names written as string literals in those places, sorted
}

// watched are the names Scan looks at.
var watched = map[string]bool{
	"getJSON": true, "postJSON": true, "fetchWithAuth": true, "fetch": true,
	"getSecret": true, "authSecret": true, "method": true,
}

// ReadMethods are the HTTP methods that do not write.
var ReadMethods = []string{"GET", "HEAD"}

// Scan statically scans JavaScript for network and secret use. It is a
// tokenizer, not a parser: comments are skipped, strings and template
// literals are read as strings (a template's ${…} expressions are
// scanned), regular-expression literals are recognised after operators.
//
// Names count as identifiers or as plain string literals (an object key
// {"authSecret": …}, globalThis["postJSON"]):
//
//   - Network: getJSON, postJSON, fetchWithAuth or fetch.
//   - NetworkWrite: postJSON; or fetch/fetchWithAuth with a `method` key
//     (identifier or string) that is not followed by ':' or '=' and a
//     string literal GET or HEAD (a computed method counts as a write).
//   - Secrets: getSecret or authSecret, a getJSON call with a second
//     argument or a postJSON call with a third. SecretNames are the string
//     literals found in those places.
//
// The scan can be fooled (globalThis["post"+"JSON"]), which is why the
// tool hands a cell only the capabilities its scan found: code that was
// not classified as writing gets a GET-only grant and code that was not
// classified as using secrets gets none. A miss therefore makes the cell
// fail, never lets it do more than its approval covered.
func Scan(code string) Usage {
	toks := tokenize(code)
	var u Usage
	usesFetch, methodWrite := false, false
	names := map[string]bool{}
	for i, tk := range toks {
		name := tk.text
		// Strings count too: {"authSecret": …}, globalThis["postJSON"].
		if tk.kind != tokIdent && (tk.kind != tokString || tk.template || !watched[name]) {
			continue
		}
		switch name {
		case "getJSON", "postJSON", "fetchWithAuth", "fetch":
			u.Network = true
			args := callArgs(toks, i)
			switch name {
			case "postJSON":
				u.NetworkWrite = true
				if len(args) >= 3 {
					u.Secrets = true
					addLiteral(names, args[2])
				}
			case "getJSON":
				if len(args) >= 2 {
					u.Secrets = true
					addLiteral(names, args[1])
				}
			default:
				usesFetch = true
			}
		case "getSecret":
			u.Secrets = true
			if args := callArgs(toks, i); len(args) >= 1 {
				addLiteral(names, args[0])
			}
		case "authSecret":
			u.Secrets = true
			if i+2 < len(toks) && toks[i+1].text == ":" {
				addLiteral(names, toks[i+2:i+3])
			}
		case "method":
			if !readMethodAt(toks, i) {
				methodWrite = true
			}
		}
	}
	// A `method` key matters only beside fetch or fetchWithAuth.
	if usesFetch && methodWrite {
		u.NetworkWrite = true
	}
	for n := range names {
		u.SecretNames = append(u.SecretNames, n)
	}
	sort.Strings(u.SecretNames)
	return u
}

// readMethodAt reports whether toks[i] (a `method` key) is followed by ':'
// or '=' and a string literal naming a read method.
func readMethodAt(toks []token, i int) bool {
	if i+2 >= len(toks) {
		return false
	}
	if op := toks[i+1].text; toks[i+1].kind != tokPunct || (op != ":" && op != "=") {
		return false
	}
	v := toks[i+2]
	if v.kind != tokString || v.template {
		return false
	}
	return slices.Contains(ReadMethods, strings.ToUpper(strings.TrimSpace(v.text)))
}

// addLiteral records a secret name given as a lone string literal.
func addLiteral(names map[string]bool, arg []token) {
	if len(arg) == 1 && arg[0].kind == tokString && !arg[0].template && arg[0].text != "" && len(arg[0].text) <= 64 {
		names[arg[0].text] = true
	}
}

// callArgs returns the top-level arguments of the call whose callee is
// toks[i], or nil when toks[i] is not followed by '('.
func callArgs(toks []token, i int) [][]token {
	if i+1 >= len(toks) || toks[i+1].text != "(" || toks[i+1].kind != tokPunct {
		return nil
	}
	var args [][]token
	var cur []token
	depth := 0
	for _, tk := range toks[i+2:] {
		if tk.kind == tokPunct {
			switch tk.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					if len(cur) > 0 {
						args = append(args, cur)
					}
					return args
				}
				depth--
			case ",":
				if depth == 0 {
					args = append(args, cur)
					cur = nil
					continue
				}
			}
		}
		cur = append(cur, tk)
	}
	if len(cur) > 0 {
		args = append(args, cur)
	}
	return args
}

type tokKind uint8

const (
	tokIdent tokKind = iota + 1
	tokString
	tokPunct
	tokOther // numbers, regular expressions
)

type token struct {
	kind     tokKind
	text     string // identifier, punctuation, or a string's raw contents
	template bool   // a template literal
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// tokenize splits JavaScript into tokens. It never fails: whatever it
// cannot make sense of becomes tokOther.
func tokenize(src string) []token {
	var toks []token
	tokenizeInto(src, &toks)
	return toks
}

func tokenizeInto(src string, toks *[]token) {
	// regexOK: a '/' here starts a regular expression, not a division.
	regexOK := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return
			}
			i += 2 + end + 2
		case c == '/' && regexOK:
			*toks = append(*toks, token{kind: tokOther, text: "/re/"})
			i = regexEnd(src, i)
			regexOK = false
		case c == '\'' || c == '"':
			var text string
			text, i = stringLit(src, i)
			*toks = append(*toks, token{kind: tokString, text: text})
			regexOK = false
		case c == '`':
			i = tokenizeTemplate(src, i+1, toks)
			regexOK = false
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			word := src[i:j]
			*toks = append(*toks, token{kind: tokIdent, text: word})
			i = j
			// After a keyword that precedes an expression, '/' is a regex.
			switch word {
			case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await":
				regexOK = true
			default:
				regexOK = false
			}
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9'):
			j := i + 1
			for j < len(src) && (isIdentPart(src[j]) || src[j] == '.') {
				j++
			}
			*toks = append(*toks, token{kind: tokOther, text: src[i:j]})
			i = j
			regexOK = false
		default:
			*toks = append(*toks, token{kind: tokPunct, text: string(c)})
			i++
			regexOK = c != ')' && c != ']' && c != '}'
		}
	}
}

// regexEnd returns the index just past the regular expression literal
// (with its flags) that starts at src[i] == '/'.
func regexEnd(src string, i int) int {
	j := i + 1
	inClass := false
	for j < len(src) && src[j] != '\n' {
		if src[j] == '\\' {
			j += 2
			continue
		}
		if src[j] == '[' {
			inClass = true
		} else if src[j] == ']' {
			inClass = false
		} else if src[j] == '/' && !inClass {
			break
		}
		j++
	}
	j++
	for j < len(src) && isIdentPart(src[j]) { // flags
		j++
	}
	return min(j, len(src))
}

// stringLit reads the quoted string that starts at src[i] (' or "): its
// text with escapes taken as the escaped byte, and the index just past
// its closing quote (or the line's end).
func stringLit(src string, i int) (string, int) {
	c := src[i]
	j := i + 1
	var b strings.Builder
	for j < len(src) && src[j] != c && src[j] != '\n' {
		if src[j] == '\\' && j+1 < len(src) {
			b.WriteByte(src[j+1])
			j += 2
			continue
		}
		b.WriteByte(src[j])
		j++
	}
	return b.String(), min(j+1, len(src))
}

// tokenizeTemplate reads a template literal whose text starts at i (after
// the backquote). Its ${…} expressions are tokenized into toks after the
// template's own string token. It returns the index after the closing
// backquote.
func tokenizeTemplate(src string, i int, toks *[]token) int {
	var b strings.Builder
	var exprs []string
	for i < len(src) && src[i] != '`' {
		switch {
		case src[i] == '\\' && i+1 < len(src):
			b.WriteByte(src[i+1])
			i += 2
		case src[i] == '$' && i+1 < len(src) && src[i+1] == '{':
			// Find the matching brace, skipping nested strings roughly.
			depth, j := 1, i+2
			for j < len(src) && depth > 0 {
				switch src[j] {
				case '{':
					depth++
				case '}':
					depth--
				case '\'', '"', '`':
					q := src[j]
					j++
					for j < len(src) && src[j] != q {
						if src[j] == '\\' {
							j++
						}
						j++
					}
				}
				j++
			}
			end := j - 1
			if end < i+2 {
				end = i + 2
			}
			exprs = append(exprs, src[i+2:min(end, len(src))])
			b.WriteString("${}")
			i = j
		default:
			b.WriteByte(src[i])
			i++
		}
	}
	*toks = append(*toks, token{kind: tokString, text: b.String(), template: true})
	for _, e := range exprs {
		tokenizeInto(e, toks)
	}
	return min(i+1, len(src))
}
