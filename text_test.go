package kairos_test

import (
	"context"
	"fmt"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/retry"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel…"},
		{"héllo", 2, "h…"}, // é is two bytes: never cut inside it
		{"日本語", 4, "日…"},
		{"abc", 0, "…"},
	} {
		got := kairos.Clip(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := retry.Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on a done context = %v, want context.Canceled", err)
	}
	if err := retry.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep = %v", err)
	}
}

func ExampleClip() {
	fmt.Println(kairos.Clip("time is what we want most", 7))
	// Output: time is…
}
