package toolutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kairos-agent/kairos"
)

// DecodeArgs decodes the model's JSON arguments into v, a pointer to a
// struct with json tags. Unknown fields, wrong types, trailing data and
// anything that is not a JSON object are refused with a kairos.EINVALID
// error whose message names the offending argument. Empty arguments
// decode as {}.
func DecodeArgs(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return kairos.Errorf(kairos.EINVALID, "arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return kairos.Errorf(kairos.EINVALID, "arguments: unexpected data after the JSON object")
	}
	return nil
}

func argError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return kairos.Errorf(kairos.EINVALID, "arguments must be a JSON object")
		}
		return kairos.Errorf(kairos.EINVALID, "argument %q: expected %s, got %s", field, typeName(te.Type.Kind().String()), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return kairos.Errorf(kairos.EINVALID, "arguments are not valid JSON (offset %d)", se.Offset)
	}
	var ke *kairos.Error
	if errors.As(err, &ke) {
		return ke
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return kairos.Errorf(kairos.EINVALID, "unknown argument %s", rest)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return kairos.Errorf(kairos.EINVALID, "arguments are not valid JSON (truncated)")
	}
	return kairos.Errorf(kairos.EINVALID, "arguments: %s", strings.TrimPrefix(msg, "json: "))
}

func typeName(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "map":
		return "an object"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	}
	return kind
}

// Int is an optional integer argument. It accepts a JSON number with an
// integral value (5 or 5.0, as models sometimes write), and refuses strings,
// fractions and out-of-range values. Set reports whether it was given.
type Int struct {
	Value int
	Set   bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		*n = Int{}
		return nil
	}
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return &json.UnmarshalTypeError{Value: jsonKind(s), Type: intType}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return &json.UnmarshalTypeError{Value: "number " + s, Type: intType}
	}
	*n = Int{Value: int(f), Set: true}
	return nil
}

// MarshalJSON implements json.Marshaler.
func (n Int) MarshalJSON() ([]byte, error) {
	if !n.Set {
		return []byte("null"), nil
	}
	return []byte(strconv.Itoa(n.Value)), nil
}

func jsonKind(s string) string {
	switch {
	case strings.HasPrefix(s, `"`):
		return "string"
	case strings.HasPrefix(s, "["):
		return "array"
	case strings.HasPrefix(s, "{"):
		return "object"
	case s == "true" || s == "false":
		return "boolean"
	}
	return s
}

// Result marshals v as the JSON content of a tool result.
func Result(v any, tainted bool) (*kairos.ToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal tool result: %w", err)
	}
	return &kairos.ToolResult{Content: b, Tainted: tainted}, nil
}

// Schema compacts a JSON Schema literal. It panics on invalid JSON: schemas
// are constants of the program, and a broken one is a programming error.
// Tools build their specs every turn, so each schema is compacted once;
// the result is shared (clipped: an append copies) and must not be
// written to.
func Schema(s string) json.RawMessage {
	if c, ok := schemas.Load(s); ok {
		return c.(json.RawMessage)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		panic("toolutil: invalid schema: " + err.Error())
	}
	out := json.RawMessage(slices.Clip(buf.Bytes()))
	if schemaCount.Load() < maxSchemas { // a bound, should a schema be built from data
		if _, loaded := schemas.LoadOrStore(s, out); !loaded {
			schemaCount.Add(1)
		}
	}
	return out
}

// schemas caches Schema's results by literal (at most maxSchemas).
var (
	schemas     sync.Map
	schemaCount atomic.Int64
)

const maxSchemas = 512

// OneOf returns an EINVALID error naming the argument and its allowed
// values when v is not among them, and nil otherwise.
func OneOf(arg, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return kairos.Errorf(kairos.EINVALID, "argument %q: %q is not one of %s", arg, v, strings.Join(allowed, ", "))
}

var intType = reflect.TypeOf(0)
