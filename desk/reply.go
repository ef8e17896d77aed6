package desk

import (
	"context"
	"errors"

	"github.com/kairos-agent/kairos"
)

// Reply is the one place an error becomes what a person is told, at every
// door (the API renders the same message under its status). An error
// Kairos made for the user (EINVALID, EBUDGET, EFORBIDDEN, …) is said as it
// is; a dependency that failed (EUNAVAILABLE) says so and to try later;
// anything else is an internal fault, said without its details.
func Reply(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "Sorry, that took too long, so I gave up. Please try again in a minute."
	}
	switch kairos.ErrorCode(err) {
	case kairos.EINTERNAL:
		return "Sorry, something went wrong on my side with that. Please try again; if it keeps happening, tell my operator."
	case kairos.EUNAVAILABLE:
		if msg := kairos.ErrorMessage(err); msg != "" && msg != "Internal error." {
			return msg
		}
		return "Sorry, a service I depend on is not answering just now. Please try again in a minute."
	}
	return kairos.ErrorMessage(err)
}

// Fault reports whether err is a fault of ours, the only kind logged as
// an error: a refusal, a bad input or an outage is not.
func Fault(err error) bool {
	return err != nil && kairos.ErrorCode(err) == kairos.EINTERNAL && !errors.Is(err, context.Canceled)
}
