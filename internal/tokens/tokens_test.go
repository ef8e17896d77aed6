package tokens

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kairos-agent/kairos/internal/fit"
)

// The expected counts are tiktoken's own (the Python reference) for these
// texts: "hello world" is 2 tokens in both encodings; the pangram is 10.
func TestCountOpenAI(t *testing.T) {
	tests := []struct {
		model, text string
		want        int
	}{
		{"gpt-4o-mini", "hello world", 2},
		{"gpt-4", "hello world", 2},
		{"gpt-4o", "The quick brown fox jumps over the lazy dog.", 10},
		{"gpt-3.5-turbo", "The quick brown fox jumps over the lazy dog.", 10},
		{"openai/gpt-4.1-mini", "", 0},
	}
	for _, tc := range tests {
		if got := Count(tc.model, tc.text); got != tc.want {
			t.Errorf("Count(%q, %q) = %d, want %d", tc.model, tc.text, got, tc.want)
		}
	}
	// Special-token text in user input is text, not a panic.
	if got := Count("gpt-4o", "<|endoftext|>"); got < 2 {
		t.Errorf("special token text counted %d", got)
	}
}

func TestCountElsewhereEstimates(t *testing.T) {
	text := strings.Repeat("local models have their own tokenizers ", 10)
	for _, m := range []string{"llama3.2:3b", "qwen2.5-7b-instruct", "deepseek-chat", "meta-llama/llama-3.3-70b-instruct"} {
		if Exact(m) || Count(m, text) != fit.Estimate(text) {
			t.Errorf("%s: not the estimate", m)
		}
	}
	if !Exact("o3-mini") || Encoding("o3-mini") != O200k || Encoding("gpt-4-turbo") != CL100k {
		t.Error("encodings")
	}
}

func TestCountConcurrent(t *testing.T) {
	want := Count("gpt-4.1", "message number one")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n := Count("gpt-4o", fmt.Sprintf("message number %s", "one")); n != want {
				t.Errorf("count %d, want %d", n, want)
			}
		}()
	}
	wg.Wait()
}

func BenchmarkCount(b *testing.B) {
	text := strings.Repeat("Kairos answers on Telegram and keeps the time. ", 20)
	Count("gpt-4o", "warm up")
	b.Run("o200k", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Count("gpt-4o", text)
		}
	})
	b.Run("estimate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Count("llama3.2:3b", text)
		}
	})
}
