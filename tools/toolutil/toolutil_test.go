package toolutil_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

type args struct {
	Query string       `json:"query"`
	Max   toolutil.Int `json:"max_results"`
	Tags  []string     `json:"tags"`
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    args
		wantErr string
	}{
		{name: "empty", in: "", want: args{}},
		{name: "null", in: "null", want: args{}},
		{name: "full", in: `{"query":"go","max_results":3,"tags":["a"]}`, want: args{Query: "go", Max: toolutil.Int{Value: 3, Set: true}, Tags: []string{"a"}}},
		{name: "integral float", in: `{"max_results":4.0}`, want: args{Max: toolutil.Int{Value: 4, Set: true}}},
		{name: "explicit null int", in: `{"max_results":null}`, want: args{}},
		{name: "unknown field", in: `{"qeury":"x"}`, wantErr: `unknown argument "qeury"`},
		{name: "fraction", in: `{"max_results":2.5}`, wantErr: `argument "max_results": expected an integer, got number 2.5`},
		{name: "string for int", in: `{"max_results":"5"}`, wantErr: `argument "max_results": expected an integer, got string`},
		{name: "number for string", in: `{"query":5}`, wantErr: `argument "query": expected a string, got number`},
		{name: "string for array", in: `{"tags":"a"}`, wantErr: `argument "tags": expected an array, got string`},
		{name: "array", in: `[1]`, wantErr: "arguments must be a JSON object"},
		{name: "syntax", in: `{"query":}`, wantErr: "not valid JSON"},
		{name: "truncated", in: `{"query":"x"`, wantErr: "not valid JSON"},
		{name: "trailing", in: `{"query":"x"} {}`, wantErr: "unexpected data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got args
			err := toolutil.DecodeArgs(json.RawMessage(tc.in), &got)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("DecodeArgs(%s) = nil error, want %q", tc.in, tc.wantErr)
				}
				if kairos.ErrorCode(err) != kairos.EINVALID {
					t.Errorf("code = %q, want %q", kairos.ErrorCode(err), kairos.EINVALID)
				}
				if msg := kairos.ErrorMessage(err); !strings.Contains(msg, tc.wantErr) {
					t.Errorf("message = %q, want it to contain %q", msg, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeArgs(%s): %v", tc.in, err)
			}
			if got.Query != tc.want.Query || got.Max != tc.want.Max || strings.Join(got.Tags, ",") != strings.Join(tc.want.Tags, ",") {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOneOf(t *testing.T) {
	if err := toolutil.OneOf("type", "web", "web", "news"); err != nil {
		t.Errorf("OneOf(web) = %v", err)
	}
	err := toolutil.OneOf("type", "images", "web", "news")
	if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), `"images" is not one of web, news`) {
		t.Errorf("OneOf(images) = %v", err)
	}
}

func TestResultAndSchema(t *testing.T) {
	r, err := toolutil.Result(map[string]any{"success": true}, true)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Content) != `{"success":true}` || !r.Tainted {
		t.Errorf("Result = %s tainted=%v", r.Content, r.Tainted)
	}
	if got := string(toolutil.Schema("{ \"type\" : \"object\" }")); got != `{"type":"object"}` {
		t.Errorf("Schema = %s", got)
	}
}

func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"max_results":1e309}`, `{"max_results":-0.0}`, `{"tags":[1]}`, `{"query":"\u0000"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var a args
		err := toolutil.DecodeArgs(json.RawMessage(s), &a)
		if err != nil && kairos.ErrorCode(err) != kairos.EINVALID {
			t.Fatalf("DecodeArgs(%q) error code %q: %v", s, kairos.ErrorCode(err), err)
		}
	})
}

// TestSchemaCompactedOnce: a schema asked for again (tools build their
// specs every turn) costs no compaction: no allocation at all, the same
// bytes; an append to the shared result does not write into it.
func TestSchemaCompactedOnce(t *testing.T) {
	lit := "{ \"type\" : \"object\", \"properties\" : { \"q\" : { \"type\" : \"string\" } } }"
	first := toolutil.Schema(lit)
	if allocs := testing.AllocsPerRun(100, func() { toolutil.Schema(lit) }); allocs != 0 {
		t.Errorf("Schema of a known literal allocates %.0f times per call", allocs)
	}
	grown := append(toolutil.Schema(lit), '!')
	if again := toolutil.Schema(lit); string(again) != string(first) || string(again) != `{"type":"object","properties":{"q":{"type":"string"}}}` || string(grown[:len(grown)-1]) != string(first) {
		t.Errorf("Schema = %s after an append to it (first %s)", again, first)
	}
}
