package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
)

// Apologies for a turn the models could not answer, each saying what
// happened: the user can do nothing about a refused key, and a hung
// endpoint is not "try again in a minute".
const (
	AuthApology    = "Sorry, I can't reach my language model: it refused my API key. My operator has been told."
	timeoutApology = "Sorry, my language model did not answer within %s, so I gave up. Please try again later."
)

// ModelTimeoutError is a model answer given up after agent.model_timeout.
type ModelTimeoutError struct {
	After time.Duration
	Last  error // the last failure seen
}

func (e *ModelTimeoutError) Error() string {
	return fmt.Sprintf("the model did not answer within %s (agent.model_timeout): %v", e.After, e.Last)
}

func (e *ModelTimeoutError) Unwrap() error { return e.Last }

// IsAuthFailure reports whether the model endpoint refused the key (HTTP
// 401 or 403).
func IsAuthFailure(err error) bool {
	var pe *kairos.ProviderError
	return errors.As(err, &pe) && (pe.StatusCode == 401 || pe.StatusCode == 403)
}

func isModelFailure(err error) bool {
	var pe *kairos.ProviderError
	var te *ModelTimeoutError
	return errors.As(err, &pe) || errors.As(err, &te)
}

// apologyFor is the user's one message for a failed turn.
func apologyFor(err error) string {
	var te *ModelTimeoutError
	switch {
	case errors.As(err, &te):
		return fmt.Sprintf(timeoutApology, te.After.Round(time.Second))
	case IsAuthFailure(err):
		return AuthApology
	}
	return Apology
}

// logTurn writes the turn's one log line: who, where, which model, how
// many tokens, how long; a failed turn is an error with its cause.
func (a *Agent) logTurn(t *turn, outcome string, err error) {
	args := []any{"user_id", t.in.UserID, "thread", t.in.ThreadKey(), "model", t.model, "tokens", t.tokens,
		"tool_calls", t.toolCalls, "ms", time.Since(t.start).Milliseconds(), "outcome", outcome}
	if err != nil {
		// Only a fault of ours is logged as one; a provider outage or a
		// refusal (a cap, a bad input) is a warning with its cause.
		if kairos.ErrorCode(err) == kairos.EINTERNAL {
			a.log.Error("turn", append(args, "err", err)...)
		} else {
			a.log.Warn("turn", append(args, "code", kairos.ErrorCode(err), "err", err)...)
		}
		return
	}
	a.log.Info("turn", args...)
}
