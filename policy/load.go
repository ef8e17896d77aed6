package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/kairos-agent/kairos"
)

var catchPanics = true

// MaxFileSize bounds a policy file; a larger file is refused.
const MaxFileSize = 1 << 20

// LoadResult is what LoadFile found.
type LoadResult struct {
	Policy *kairos.Policy
	// Defaults is true when there was no file at Path and Policy is the
	// built-in kairos.DefaultPolicy() (the log should say so).
	Defaults bool
	Path     string
}

// Load reads and validates the policy file at path. A missing file is not
// an error: the built-in defaults are returned (use LoadFile to know).
// Any other problem is returned as Errors (every problem of the file, each
// as "file:line:col: message") or as an I/O error.
func Load(path string) (*kairos.Policy, error) {
	r, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	return r.Policy, nil
}

// LoadFile is Load that also says whether the defaults are in force.
// `kairos policy check FILE` should treat Defaults as "no such file".
func LoadFile(path string) (LoadResult, error) {
	res := LoadResult{Path: path}
	data, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		res.Policy, res.Defaults = withBuiltins(kairos.DefaultPolicy()), true
		return res, nil
	}
	if err != nil {
		return res, err
	}
	p, err := Parse(path, data)
	if err != nil {
		return res, err
	}
	res.Policy = p
	return res, nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	if st.IsDir() {
		return nil, Errors{{File: path, Msg: "is a directory, not a policy file"}}
	}
	if st.Size() > MaxFileSize {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}}
	}
	return data, nil
}

// Parse decodes and validates a policy held in memory; name is used as the
// file in error positions. Missing keys keep kairos.DefaultPolicy()'s
// values, a given list replaces the default list, a null value counts as
// absent, and the built-in blocked categories are always merged in.
func Parse(name string, data []byte) (p *kairos.Policy, err error) {
	defer func() {
		// goccy/go-yaml is robust, but a policy loader must never take the
		// process down on a malformed file. (The fuzz test turns this off
		// to see panics.)
		if !catchPanics {
			return
		}
		if r := recover(); r != nil {
			p, err = nil, Errors{{File: name, Line: 1, Col: 1, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}}
		}
	}()
	if len(data) > MaxFileSize {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}}
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, Errors{syntaxError(name, err)}
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if _, ok := doc.Body.(*ast.CommentGroupNode); ok {
			continue
		}
		if body != nil {
			pp := tokenPos(doc.Body)
			if doc.Start != nil && doc.Start.Position != nil {
				pp = pos{doc.Start.Position.Line, doc.Start.Position.Column}
			}
			return nil, Errors{{File: name, Line: pp.line, Col: pp.col, Msg: "a policy file holds one YAML document"}}
		}
		body = doc.Body
	}
	p = kairos.DefaultPolicy()
	d := newDecoder(name)
	if body != nil {
		d.collectAnchors(body)
		d.decode(body, reflect.ValueOf(p).Elem(), "")
	}
	p = withBuiltins(p)
	for _, fe := range validate(p) {
		pp := d.lookup(fe.path, fe.key)
		d.errs = append(d.errs, PosError{File: name, Line: pp.line, Col: pp.col, Msg: fe.String()})
	}
	if len(d.errs) > 0 {
		d.errs.sort()
		return nil, d.errs
	}
	return p, nil
}

func syntaxError(name string, err error) PosError {
	pe := PosError{File: name, Line: 1, Col: 1, Msg: err.Error()}
	var ye yaml.Error
	if errors.As(err, &ye) {
		pe.Msg = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			pe.Line, pe.Col = tk.Position.Line, tk.Position.Column
		}
	}
	pe.Msg = "YAML syntax: " + pe.Msg
	return pe
}

// withBuiltins returns p with kairos.BuiltinBlockedCategories merged into
// network.blocked_categories (first, then the operator's additions).
func withBuiltins(p *kairos.Policy) *kairos.Policy {
	seen := map[string]bool{}
	out := make([]string, 0, len(kairos.BuiltinBlockedCategories)+len(p.Network.BlockedCategories))
	for _, c := range append(append([]string(nil), kairos.BuiltinBlockedCategories...), p.Network.BlockedCategories...) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	p.Network.BlockedCategories = out
	return p
}
