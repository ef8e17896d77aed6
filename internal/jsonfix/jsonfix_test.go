package jsonfix

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestRepair(t *testing.T) {
	for in, want := range map[string]string{
		`{'a': 'it\'s', "b": [1, 2,],}`:        `{"a":"it's","b":[1,2]}`,
		`{"ok": True, "no": False, "x": None}`: `{"no":false,"ok":true,"x":null}`,
		"{\"t\": \"two\nlines\"}":              `{"t":"two\nlines"}`,
		`{"s": "True stays, so does 'this'"}`:  `{"s":"True stays, so does 'this'"}`,
	} {
		var got, exp any
		if err := json.Unmarshal([]byte(Repair(in)), &got); err != nil {
			t.Fatalf("Repair(%q) = %q: %v", in, Repair(in), err)
		}
		json.Unmarshal([]byte(want), &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("Repair(%q) reads %v, want %v", in, got, exp)
		}
	}
}

func TestEnd(t *testing.T) {
	s := `say {"a": "}", "b": [{"c": 1}]} then`
	if got := End(s, 4); s[4:got] != `{"a": "}", "b": [{"c": 1}]}` {
		t.Fatalf("End = %d (%q)", got, s[4:got])
	}
	if End(`{"open": 1`, 0) != -1 {
		t.Fatal("an unclosed object has an end")
	}
}

// FuzzRepair: valid JSON without single quotes or Python words reads the
// same after Repair.
func FuzzRepair(f *testing.F) {
	f.Add(`{"a": [1, 2, {"b": "c"}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		var before any
		if json.Unmarshal([]byte(s), &before) != nil {
			return
		}
		for _, c := range s {
			if c == '\'' || c == 'T' || c == 'F' || c == 'N' || c == ',' {
				return
			}
		}
		var after any
		if err := json.Unmarshal([]byte(Repair(s)), &after); err != nil || !reflect.DeepEqual(before, after) {
			t.Fatalf("Repair changed %q into %q", s, Repair(s))
		}
	})
}
