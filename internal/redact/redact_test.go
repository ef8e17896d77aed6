package redact_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/redact"
)

func TestRedactorScrub(t *testing.T) {
	const secret = "ghp_A1b2C3d4E5f6G7h8I9j0"
	r := redact.New([]string{secret, "abc"})
	b := []byte(secret)
	tests := []struct {
		name, in string
		leak     []string
	}{
		{"raw", "token=" + secret + ".", []string{secret}},
		{"base64 std", base64.StdEncoding.EncodeToString(b), nil},
		{"base64 url raw", base64.RawURLEncoding.EncodeToString(b), nil},
		{"base64 inside", base64.StdEncoding.EncodeToString([]byte("Bearer " + secret)), nil},
		{"hex", hex.EncodeToString(b), nil},
		{"HEX", strings.ToUpper(hex.EncodeToString(b)), nil},
		{"url", url.QueryEscape(secret + "&x"), nil},
		{"lines", secret[:9] + "\n" + secret[9:18] + "\n" + secret[18:], nil},
		{"chunk", "part " + secret[3:14] + " end", []string{secret[3:14]}},
		{"spaced", strings.Join(strings.Split(secret, ""), " "), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := r.Scrub(tc.in)
			if !strings.Contains(out, redact.Redacted) {
				t.Fatalf("Scrub(%q) = %q: nothing redacted", tc.in, out)
			}
			for _, l := range append(tc.leak, secret) {
				if strings.Contains(out, l) {
					t.Fatalf("Scrub(%q) = %q leaks %q", tc.in, out, l)
				}
			}
		})
	}
	for _, clean := range []string{"", "hello world", "abc is short and ignored", "ghp_ alone"} {
		if got := r.Scrub(clean); got != clean {
			t.Errorf("Scrub(%q) = %q, want unchanged", clean, got)
		}
	}
	if got := redact.New(nil).Scrub("x"); got != "x" {
		t.Errorf("empty redactor changed text: %q", got)
	}
}

func ExampleRedactor_Scrub() {
	r := redact.New([]string{"s3cr3t-token-value"})
	fmt.Println(r.Scrub("Authorization: Bearer s3cr3t-token-value"))
	fmt.Println(r.Scrub("czNjcjN0LXRva2VuLXZhbHVl is its base64"))
	// Output:
	// Authorization: Bearer [REDACTED]
	// [REDACTED] is its base64
}

func FuzzRedactorScrub(f *testing.F) {
	f.Add("s3cr3t-token-value", "x s3cr3t-token-value y")
	f.Add("abcdefghij", "abcde\nfghij")
	f.Fuzz(func(t *testing.T, secret, text string) {
		r := redact.New([]string{secret})
		out := r.Scrub(text)
		if len(secret) >= redact.MinSecretLen && strings.Contains(out, secret) {
			t.Fatalf("secret %q survives in %q", secret, out)
		}
	})
}

func TestScrubJSON(t *testing.T) {
	r := redact.New([]string{"8675309123", "plain-secret-1"})
	for _, tc := range []struct{ in, want string }{
		{`{"a":"plain-secret-1"}`, `{"a":"[REDACTED]"}`},
		{`{"a":"nothing here"}`, `{"a":"nothing here"}`},
		// The secret is a bare number: the replacement breaks the JSON, so
		// the scrubbed text comes back as one JSON string.
		{`{"n":8675309123}`, `"{\"n\":[REDACTED]}"`},
		{``, ``},
	} {
		got := string(r.ScrubJSON(json.RawMessage(tc.in)))
		if got != tc.want {
			t.Errorf("ScrubJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
		if got != "" && !json.Valid([]byte(got)) {
			t.Errorf("ScrubJSON(%s) = %s is not JSON", tc.in, got)
		}
	}
}

// SecretNames keeps the named secrets that have a value, sorted;
// SecretsRedactor scrubs every value given.
func TestSecretNamesAndRedactor(t *testing.T) {
	m := map[string]string{"B_TOKEN": "b-secret-value-1234", "A_KEY": "a-secret-value-5678", "EMPTY": "", "": "nameless-value-9012"}
	if got := strings.Join(redact.SecretNames(m), ","); got != "A_KEY,B_TOKEN" {
		t.Fatalf("SecretNames = %q, want A_KEY,B_TOKEN", got)
	}
	red := redact.ForSecrets(m)
	for _, v := range []string{"b-secret-value-1234", "a-secret-value-5678", "nameless-value-9012"} {
		if got := red.Scrub("x " + v + " y"); strings.Contains(got, v) {
			t.Errorf("Scrub left %q in %q", v, got)
		}
	}
	if redact.SecretNames(nil) != nil || !redact.ForSecrets(nil).Empty() {
		t.Error("no secrets: want no names and an empty redactor")
	}
}
