package tokens

import (
	"strings"
	"sync"

	"github.com/kairos-agent/kairos/internal/fit"
	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encodings by name.
const (
	O200k  = "o200k_base"  // gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3, o4
	CL100k = "cl100k_base" // gpt-4, gpt-3.5-turbo, text-embedding-3-*, ada-002
)

// Encoding names the tiktoken encoding of model, or "" when Kairos has no
// tokenizer for it. OpenRouter-style names ("openai/gpt-4o") count.
func Encoding(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		if !strings.HasPrefix(m, "openai/") {
			return ""
		}
		m = m[i+1:]
	}
	for _, p := range []string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4"} {
		if strings.HasPrefix(m, p) {
			return O200k
		}
	}
	for _, p := range []string{"gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada-002"} {
		if strings.HasPrefix(m, p) {
			return CL100k
		}
	}
	return ""
}

type encoder struct {
	once sync.Once
	enc  *tiktoken.Tiktoken
}

var (
	loaderOnce sync.Once
	encoders   = map[string]*encoder{O200k: {}, CL100k: {}}
)

// get loads an encoding on first use (some 100 ms for o200k_base).
func get(name string) *tiktoken.Tiktoken {
	e := encoders[name]
	if e == nil {
		return nil
	}
	loaderOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	e.once.Do(func() {
		enc, err := tiktoken.GetEncoding(name)
		if err == nil {
			e.enc = enc
		}
	})
	return e.enc
}

// Count returns the tokens of text for model: exact for OpenAI families,
// estimated elsewhere. It is safe for concurrent use.
func Count(model, text string) int {
	if text == "" {
		return 0
	}
	if enc := get(Encoding(model)); enc != nil {
		return len(enc.EncodeOrdinary(text))
	}
	return fit.Estimate(text)
}

// Exact reports whether Count uses a real tokenizer for model.
func Exact(model string) bool { return Encoding(model) != "" }
