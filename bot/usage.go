package bot

import (
	"context"

	"github.com/kairos-agent/kairos"
)

// Pictures from commands (/usage's chart): a command's Run may send a
// photo to the chat it answers with SendPhoto; its text follows.

type commandReplierKey struct{}

func withCommandReplier(ctx context.Context, r *replier) context.Context {
	return context.WithValue(ctx, commandReplierKey{}, r)
}

// maxPhotoUpload bounds a photo (Telegram takes 10 MB).
const maxPhotoUpload = 10 << 20

// SendPhoto sends a PNG or JPEG with a caption to the chat of the command
// being answered (ctx is its Run's), once (recorded in the outbox). It
// returns false when ctx is not a Telegram command's (the terminal chat):
// the caller then says it in words only.
func SendPhoto(ctx context.Context, image []byte, caption string) (bool, error) {
	r, ok := ctx.Value(commandReplierKey{}).(*replier)
	if !ok || r == nil {
		return false, nil
	}
	if len(image) > maxPhotoUpload {
		return true, kairos.Errorf(kairos.EINVALID, "the picture is too large to send")
	}
	return true, r.uploadOnce(ctx, "photo", "sendPhoto", "chart.png", image, "caption", kairos.Clip(caption, 1000))
}
