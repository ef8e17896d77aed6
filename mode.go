package kairos

import (
	"context"
	"time"
)

// ThreadMode is a thread's place in seed 002's mode machine
// (DISCUSS → DIAGNOSE → EXECUTE) and its capability envelope.
type ThreadMode struct {
	ThreadKey string
	Mode      string
	Envelope  string
	SessionID string // a hop keeps it
	UpdatedAt time.Time
}

// ModeTransitionRecord journals one accepted mode change.
type ModeTransitionRecord struct {
	ThreadKey     string
	From, To      string
	Cause         string // advance, approved, exit, reset, timeout
	Actor         string
	ApprovalToken string
	Summary       string
	At            time.Time
}

// ModeStore persists thread modes.
type ModeStore interface {
	// ThreadMode returns the thread's mode (ENOTFOUND when never set).
	ThreadMode(ctx context.Context, threadKey string) (*ThreadMode, error)
	// SetThreadMode stores the mode and journals the transition (if any).
	SetThreadMode(ctx context.Context, m *ThreadMode, tr *ModeTransitionRecord) error
}
