package bot

import (
	"fmt"
	"testing"
	"time"
)

func TestAttemptLimiter(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	l := newAttemptLimiter(time.Hour)
	keys, limits := []string{"u:1", "c:1"}, []int{3, 10}
	for i := 1; i <= 5; i++ {
		if got, want := l.allow(t0, keys, limits), i <= 3; got != want {
			t.Fatalf("attempt %d allowed = %v, want %v", i, got, want)
		}
	}
	if !l.blocked(t0, keys, limits) {
		t.Fatal("not blocked after the limit")
	}
	// Another user in the same chat: the chat still has room.
	if !l.allow(t0, []string{"u:2", "c:1"}, limits) {
		t.Fatal("a second user was refused")
	}
	// The chat's own limit: 10 attempts across users.
	for u := 3; u <= 8; u++ {
		l.allow(t0, []string{fmt.Sprintf("u:%d", u), "c:1"}, limits)
	}
	if l.allow(t0, []string{"u:99", "c:1"}, limits) {
		t.Fatal("the chat limit did not hold")
	}
	// A new window opens after an hour.
	if l.blocked(t0.Add(time.Hour), keys, limits) || !l.allow(t0.Add(time.Hour), keys, limits) {
		t.Fatal("the window did not reopen")
	}
}

func TestAttemptLimiterBoundsMemory(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	l := newAttemptLimiter(time.Hour)
	for i := range maxAttemptKeys {
		l.allow(t0, []string{fmt.Sprint(i)}, []int{1})
	}
	if l.allow(t0, []string{"one more"}, []int{1}) {
		t.Fatal("a new key was admitted past maxAttemptKeys")
	}
	// Once the old windows expire they are dropped and new keys fit.
	if !l.allow(t0.Add(time.Hour), []string{"later"}, []int{1}) || len(l.seen) > 1 {
		t.Fatalf("expired keys kept: %d", len(l.seen))
	}
}
