package kairos

// MediaPolicy is the policy's `media` section: voice notes, photos and
// documents.
type MediaPolicy struct {
	// Enabled offers media at all; when false, files are answered with one
	// sentence saying only text is read, and nothing about media is in the
	// prompt or the command menu.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Vision says the chat model reads images. KAIROS_VISION_MODEL turns
	// vision on with that model whatever this says.
	Vision bool `yaml:"vision" json:"vision"`
	// MaxImageSide is the longest side, in pixels, an image is scaled down
	// to before it reaches the model.
	MaxImageSide int `yaml:"max_image_side" json:"max_image_side"`
	// MaxDocumentBytes is the most extracted text a document may have;
	// a larger one is refused with a message saying so.
	MaxDocumentBytes int `yaml:"max_document_bytes" json:"max_document_bytes"`
	// ShowTranscript quotes what was heard above the answer to a voice note.
	ShowTranscript bool `yaml:"show_transcript" json:"show_transcript"`
	// VoiceReplies lets users turn on spoken answers with /voice on.
	VoiceReplies bool `yaml:"voice_replies" json:"voice_replies"`
	// StoreImages keeps the scaled images under KAIROS_DATA_DIR/media
	// (named by their SHA-256) and notes the file in the session; by
	// default images live for the turn only.
	StoreImages bool `yaml:"store_images" json:"store_images"`
	// MaxParallelFiles is how many images and documents are downloaded and
	// decoded at once across all chats; more wait their turn (each may
	// take up to 20 MB downloaded and 160 MB decoded).
	MaxParallelFiles int `yaml:"max_parallel_files" json:"max_parallel_files"`
}

// Media defaults.
const (
	DefaultMaxImageSide     = 1568
	DefaultMaxDocumentBytes = 256 << 10
	DefaultMaxParallelFiles = 2
)

// DefaultMediaPolicy returns the built-in media section.
func DefaultMediaPolicy() MediaPolicy {
	return MediaPolicy{
		Enabled:          true,
		Vision:           false,
		MaxImageSide:     DefaultMaxImageSide,
		MaxDocumentBytes: DefaultMaxDocumentBytes,
		ShowTranscript:   true,
		VoiceReplies:     true,
		MaxParallelFiles: DefaultMaxParallelFiles,
	}
}
