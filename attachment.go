package kairos

import (
	"context"
	"io"
	"time"
)

// Kinds of attachment a message can carry.
const (
	AttachVoice     = "voice"      // a voice note (Opus in Ogg)
	AttachAudio     = "audio"      // an audio file
	AttachVideoNote = "video_note" // a round video message (its sound is transcribed)
	AttachPhoto     = "photo"      // a compressed photo
	AttachDocument  = "document"   // any file sent as a file (images and text included)
)

// MaxDownloadBytes is the largest file a bot may download through the Bot
// API (Telegram's limit for getFile).
const MaxDownloadBytes = 20 << 20

// Attachment is a file that came with a message. Its bytes are not held:
// Open streams them from the channel for the current turn only.
type Attachment struct {
	Kind     string        // AttachVoice, AttachPhoto, …
	Name     string        // file name as sent ("" when the channel gives none)
	MIME     string        // MIME type as the channel reports it ("" when unknown)
	Size     int64         // bytes, as the channel reports it (0 when unknown)
	Duration time.Duration // voice, audio and video notes
	// Open streams the file. Every call downloads it anew; the reader
	// yields at most MaxDownloadBytes and fails with EINVALID past that.
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// ImagePart is an image prepared for the model: a data: URL of a JPEG or
// PNG already scaled down to the policy's media.max_image_side.
type ImagePart struct {
	Name    string
	DataURL string
	Stored  string // path under the data directory when media.store_images kept it
}

// DocumentPart is the text extracted from a document the user sent. It is
// untrusted content: a forwarded file can carry instructions like a web
// page, so a turn with a document is tainted.
type DocumentPart struct {
	Name string
	MIME string
	Text string
}

// Transcriber turns speech into text (the OpenAI-compatible
// /audio/transcriptions endpoint). Failures are *ProviderError.
type Transcriber interface {
	Transcribe(ctx context.Context, fileName string, audio io.Reader) (string, error)
}

// Speaker turns text into speech (the OpenAI-compatible /audio/speech
// endpoint); the reader yields Ogg/Opus audio. Failures are *ProviderError.
type Speaker interface {
	Speak(ctx context.Context, text string) (io.ReadCloser, error)
}

// VoiceReplier is a Replier that can also send a voice message (Ogg/Opus
// audio) into the turn's chat: Telegram's sendVoice.
type VoiceReplier interface {
	SendVoice(ctx context.Context, audio io.Reader) error
}
