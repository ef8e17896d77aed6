package kairos

import (
	"errors"
	"fmt"
)

// Error codes. Adapters translate their failures into one of these so that
// the bot can turn any error into a reply in one place.
const (
	EINVALID      = "invalid"      // bad input from a user, the model or a file
	ENOTFOUND     = "not_found"    // the thing asked for does not exist
	ECONFLICT     = "conflict"     // the thing exists already or changed under us
	EUNAUTHORIZED = "unauthorized" // the caller is not known
	EFORBIDDEN    = "forbidden"    // the caller is known but may not do this
	EBUDGET       = "budget"       // a budget or limit was reached
	EUNAVAILABLE  = "unavailable"  // a dependency (model, Telegram, search) failed
	EINTERNAL     = "internal"     // a fault of ours; the only code logged as one
)

// Error is an application error with a machine-readable code and a message
// that is safe to show to a user.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("kairos error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain; a model
// provider's failure (*ProviderError) is EUNAVAILABLE; EINTERNAL for any
// other non-nil error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var pe *ProviderError
	if errors.As(err, &pe) {
		return EUNAVAILABLE
	}
	return EINTERNAL
}

// ErrorMessage returns the user-safe message of the first *Error in err's
// chain, or a generic text for any other error (whose details may hold
// internals that must not reach a user).
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	var pe *ProviderError
	if errors.As(err, &pe) {
		return "The language model is not answering just now; try again in a minute."
	}
	return "Internal error."
}
