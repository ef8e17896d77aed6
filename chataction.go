package kairos

import "context"

// Chat actions: what a channel shows while a turn works (Telegram's
// sendChatAction). ActionReplier is optional; ShowAction ignores
// repliers without it.
const (
	ActionTyping         = "typing"
	ActionRecordVoice    = "record_voice" // transcribing a voice note or audio
	ActionUploadDocument = "upload_document"
)

// ActionReplier is a Replier that shows the kind of work under way until
// the answer arrives (the channel repeats it while the work lasts).
type ActionReplier interface {
	Action(ctx context.Context, action string)
}

// ShowAction sets the work shown by out, when out can show one.
func ShowAction(ctx context.Context, out Replier, action string) {
	if a, ok := out.(ActionReplier); ok {
		a.Action(ctx, action)
	}
}
