package policy

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"

	"github.com/goccy/go-yaml/ast"

	"github.com/kairos-agent/kairos"
)

// The decoder walks goccy/go-yaml's AST itself instead of using goccy's
// Unmarshal: that way it reports every unknown key and type mismatch of the
// file (not only the first), with the token's line and column, and it
// records where each value came from so that Validate's findings can be
// placed in the file too.

type pos struct{ line, col int }

type decoder struct {
	file    string
	errs    Errors
	anchors map[string]ast.Node
	valPos  map[string]pos // path → position of the value
	keyPos  map[string]pos // path → position of the key
	depth   int
}

const maxDepth = 64

func newDecoder(file string) *decoder {
	return &decoder{
		file:    file,
		anchors: map[string]ast.Node{},
		valPos:  map[string]pos{},
		keyPos:  map[string]pos{},
	}
}

func tokenPos(n ast.Node) pos {
	if n == nil {
		return pos{}
	}
	// A block mapping's own token is its first ':'; point at its first key.
	if m, ok := n.(*ast.MappingNode); ok && !m.IsFlowStyle && len(m.Values) > 0 && m.Values[0] != nil && m.Values[0].Key != nil {
		return tokenPos(m.Values[0].Key)
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return pos{}
	}
	return pos{tk.Position.Line, tk.Position.Column}
}

func (d *decoder) errorf(p pos, format string, args ...any) {
	d.errs = append(d.errs, PosError{File: d.file, Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)})
}

// collectAnchors records every anchor of the document so aliases resolve.
func (d *decoder) collectAnchors(n ast.Node) {
	if n == nil {
		return
	}
	ast.Walk(anchorVisitor{d}, n)
}

type anchorVisitor struct{ d *decoder }

func (v anchorVisitor) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
		name := a.Name.GetToken().Value
		if _, seen := v.d.anchors[name]; !seen {
			v.d.anchors[name] = a.Value
		}
	}
	return v
}

// resolve strips anchors, tags and comments and follows aliases. The
// returned tag is the explicit tag, if any ("!!str").
func (d *decoder) resolve(n ast.Node) (ast.Node, string) {
	tag := ""
	for i := 0; i < maxDepth && n != nil; i++ {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			if x.Start != nil {
				tag = x.Start.Value
			}
			n = x.Value
		case *ast.AliasNode:
			if x.Value == nil {
				return nil, tag
			}
			target, ok := d.anchors[x.Value.GetToken().Value]
			if !ok {
				return nil, tag
			}
			n = target
		case *ast.CommentGroupNode:
			return nil, tag
		default:
			return n, tag
		}
	}
	return n, tag
}

func isNull(n ast.Node) bool {
	if n == nil {
		return true
	}
	_, ok := n.(*ast.NullNode)
	return ok
}

// describe names the kind of a node for messages: `a string "yes"`.
func describe(n ast.Node) string {
	switch x := n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.BoolNode:
		return fmt.Sprintf("a boolean %v", x.Value)
	case *ast.IntegerNode:
		return "an integer " + x.GetToken().Value
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number " + x.GetToken().Value
	case *ast.StringNode:
		return fmt.Sprintf("a string %q", clip(x.Value))
	case *ast.LiteralNode:
		return "a text block"
	default:
		return "a " + strings.ToLower(n.Type().String())
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// fieldInfo lists the yaml keys of a struct type.
type fieldInfo struct {
	names []string         // in declaration order
	index map[string][]int // yaml key → field index path (inlined structs' keys too)
}

var fieldCache sync.Map // reflect.Type → *fieldInfo

func fieldsOf(t reflect.Type) *fieldInfo {
	if fi, ok := fieldCache.Load(t); ok {
		return fi.(*fieldInfo)
	}
	fi := &fieldInfo{index: map[string][]int{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && strings.Contains(f.Tag.Get("yaml"), ",inline") {
			in := fieldsOf(f.Type)
			for _, name := range in.names {
				fi.names = append(fi.names, name)
				fi.index[name] = append([]int{i}, in.index[name]...)
			}
			continue
		}
		name := yamlName(f)
		if name == "" {
			continue
		}
		fi.names = append(fi.names, name)
		fi.index[name] = []int{i}
	}
	fieldCache.Store(t, fi)
	return fi
}

// yamlName is the key of a struct field ("" when it has none or is "-").
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decode stores node n into v (which holds the value so far, e.g. the
// default). A null or absent node leaves v unchanged.
func (d *decoder) decode(n ast.Node, v reflect.Value, path string) {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		d.errorf(tokenPos(n), "%s: nested too deeply", path)
		return
	}
	raw := n
	n, tag := d.resolve(n)
	if n == nil {
		if a, ok := raw.(*ast.AliasNode); ok {
			d.errorf(tokenPos(a), "%s: unknown alias %s", path, a.String())
		}
		return
	}
	if _, ok := n.(*ast.NullNode); ok {
		return // null means "not given": the default stays
	}
	p := tokenPos(n)
	d.valPos[path] = p
	if v.Kind() != reflect.Pointer && v.CanAddr() {
		if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
			d.decodeText(n, u, path, p)
			return
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		m, ok := n.(*ast.MappingNode)
		if !ok {
			d.typeErr(n, path, "a mapping")
			return
		}
		d.decodeStruct(m, v, path)
	case reflect.Map:
		m, ok := n.(*ast.MappingNode)
		if !ok {
			d.typeErr(n, path, "a mapping")
			return
		}
		d.decodeMap(m, v, path)
	case reflect.Slice:
		s, ok := n.(*ast.SequenceNode)
		if !ok {
			d.typeErr(n, path, "a list")
			return
		}
		out := reflect.MakeSlice(v.Type(), 0, len(s.Values))
		for i, item := range s.Values {
			elem := reflect.New(v.Type().Elem()).Elem()
			d.decode(item, elem, fmt.Sprintf("%s[%d]", path, i))
			out = reflect.Append(out, elem)
		}
		v.Set(out)
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			elem.Elem().Set(v.Elem())
		}
		d.decode(n, elem.Elem(), path)
		v.Set(elem)
	default:
		d.decodeScalar(n, tag, v, path, p)
	}
}

// decodeScalar decodes a boolean, integer, float or string value.
func (d *decoder) decodeScalar(n ast.Node, tag string, v reflect.Value, path string, p pos) {
	switch v.Kind() {
	case reflect.Bool:
		b, ok := n.(*ast.BoolNode)
		if !ok {
			d.typeErr(n, path, "true or false")
			return
		}
		v.SetBool(b.Value)
	case reflect.Int, reflect.Int64, reflect.Int32:
		in, ok := n.(*ast.IntegerNode)
		if !ok {
			d.typeErr(n, path, "an integer")
			return
		}
		var i int64
		switch x := in.Value.(type) {
		case int64:
			i = x
		case uint64:
			if x > math.MaxInt64 {
				d.errorf(p, "%s: %s is too large", path, in.GetToken().Value)
				return
			}
			i = int64(x)
		default:
			d.typeErr(n, path, "an integer")
			return
		}
		if v.OverflowInt(i) {
			d.errorf(p, "%s: %d is too large", path, i)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		switch x := n.(type) {
		case *ast.IntegerNode:
			switch y := x.Value.(type) {
			case int64:
				v.SetFloat(float64(y))
			case uint64:
				v.SetFloat(float64(y))
			}
		case *ast.FloatNode:
			v.SetFloat(x.Value)
		default:
			d.typeErr(n, path, "a number")
		}
	case reflect.String:
		switch x := n.(type) {
		case *ast.StringNode:
			v.SetString(x.Value)
		case *ast.LiteralNode:
			v.SetString(x.Value.Value)
		default:
			if tag == "!!str" {
				if sc, ok := n.(ast.ScalarNode); ok {
					v.SetString(sc.GetToken().Value)
					return
				}
			}
			d.typeErr(n, path, "a string")
		}
	default:
		d.errorf(p, "%s: unsupported field kind %s", path, v.Kind())
	}
}

// decodeText decodes a scalar into a type that parses its own text
// (kairos.Duration): its parse error is placed at the value.
func (d *decoder) decodeText(n ast.Node, u encoding.TextUnmarshaler, path string, p pos) {
	var text string
	switch x := n.(type) {
	case *ast.StringNode:
		text = x.Value
	case *ast.LiteralNode:
		text = x.Value.Value
	default:
		sc, ok := n.(ast.ScalarNode)
		if !ok {
			d.typeErr(n, path, "a string")
			return
		}
		text = sc.GetToken().Value // 30m or 600: the parser says what is wrong
	}
	if err := u.UnmarshalText([]byte(text)); err != nil {
		d.errorf(p, "%s: %s", path, kairos.ErrorMessage(err))
	}
}

func (d *decoder) typeErr(n ast.Node, path, want string) {
	hint := ""
	if s, ok := n.(*ast.StringNode); ok && want == "true or false" {
		switch strings.ToLower(s.Value) {
		case "yes", "no", "on", "off", "y", "n":
			hint = " (YAML 1.2: write true or false)"
		}
	}
	if want == "a string" {
		switch n.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
			hint = " (quote it)"
		}
	}
	label := path
	if label == "" {
		label = "the policy file"
	}
	d.errorf(tokenPos(n), "%s: expected %s, got %s%s", label, want, describe(n), hint)
}

// entries returns a mapping's key/value pairs with merge keys (<<)
// expanded first, so that explicit keys override merged ones.
func (d *decoder) entries(m *ast.MappingNode, path string) []*ast.MappingValueNode {
	var merged, explicit []*ast.MappingValueNode
	for _, mv := range m.Values {
		if mv == nil || mv.Key == nil {
			continue
		}
		if mv.Key.IsMergeKey() {
			d.depth++
			merged = append(merged, d.mergeSources(mv.Value, path)...)
			d.depth--
			continue
		}
		explicit = append(explicit, mv)
	}
	return append(merged, explicit...)
}

func (d *decoder) mergeSources(n ast.Node, path string) []*ast.MappingValueNode {
	if d.depth > maxDepth {
		d.errorf(tokenPos(n), "%s: nested too deeply", path)
		return nil
	}
	r, _ := d.resolve(n)
	switch x := r.(type) {
	case *ast.MappingNode:
		return d.entries(x, path)
	case *ast.SequenceNode:
		var out []*ast.MappingValueNode
		for _, item := range x.Values {
			out = append(out, d.mergeSources(item, path)...)
		}
		return out
	case nil, *ast.NullNode:
		return nil
	default:
		d.errorf(tokenPos(n), "%s: a merge key (<<) needs a mapping, got %s", path, describe(r))
		return nil
	}
}

// keyText returns a mapping key as text, or false when it is not a scalar.
func (d *decoder) keyText(k ast.MapKeyNode) (string, bool) {
	n, _ := d.resolve(k)
	if mk, ok := n.(*ast.MappingKeyNode); ok {
		n, _ = d.resolve(mk.Value)
	}
	switch x := n.(type) {
	case *ast.StringNode:
		return x.Value, true
	case ast.ScalarNode:
		if x.GetToken() != nil {
			return x.GetToken().Value, true
		}
	}
	return "", false
}

func (d *decoder) decodeStruct(m *ast.MappingNode, v reflect.Value, path string) {
	fi := fieldsOf(v.Type())
	for _, mv := range d.entries(m, path) {
		key, ok := d.keyText(mv.Key)
		kp := tokenPos(mv.Key)
		if !ok {
			d.errorf(kp, "%s: keys must be plain text", orTop(path))
			continue
		}
		idx, known := fi.index[key]
		if !known {
			where := ""
			if path != "" {
				where = " in " + path
			}
			d.errorf(kp, "unknown key %q%s%s", key, where, didYouMean(key, fi.names))
			continue
		}
		fp := join(path, key)
		d.keyPos[fp] = kp
		if isNull(mv.Value) {
			d.valPos[fp] = kp
		}
		d.decode(mv.Value, v.FieldByIndex(idx), fp)
	}
}

func orTop(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

func (d *decoder) decodeMap(m *ast.MappingNode, v reflect.Value, path string) {
	out := reflect.MakeMap(v.Type())
	for _, mv := range d.entries(m, path) {
		key, ok := d.keyText(mv.Key)
		kp := tokenPos(mv.Key)
		if !ok {
			d.errorf(kp, "%s: keys must be plain text", path)
			continue
		}
		fp := join(path, key)
		d.keyPos[fp] = kp
		elem := reflect.New(v.Type().Elem()).Elem()
		if isNull(mv.Value) {
			d.valPos[fp] = kp
		}
		d.decode(mv.Value, elem, fp)
		out.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), elem)
	}
	v.Set(out)
}

// lookup returns the best known position for a path: the value's, else
// the key's, else the nearest ancestor's.
func (d *decoder) lookup(path string, key bool) pos {
	for p := path; ; {
		if key {
			if kp, ok := d.keyPos[p]; ok {
				return kp
			}
		}
		if vp, ok := d.valPos[p]; ok {
			return vp
		}
		if kp, ok := d.keyPos[p]; ok {
			return kp
		}
		if p == "" {
			return pos{1, 1}
		}
		p = parent(p)
	}
}

func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}
