package policy

import "github.com/kairos-agent/kairos"

// Bounds of the media section.
const (
	MinImageSide     = 64
	MaxImageSide     = 8192
	MaxDocumentBytes = 16 << 20
	MaxParallelFiles = 64
)

func validateMedia(c *checker, m *kairos.MediaPolicy) {
	if m.MaxImageSide < MinImageSide || m.MaxImageSide > MaxImageSide {
		c.add("media.max_image_side", "must be between %d and %d pixels, got %d", MinImageSide, MaxImageSide, m.MaxImageSide)
	}
	if m.MaxDocumentBytes < 1 || m.MaxDocumentBytes > MaxDocumentBytes {
		c.add("media.max_document_bytes", "must be between 1 and %d, got %d", MaxDocumentBytes, m.MaxDocumentBytes)
	}
	if m.MaxParallelFiles < 1 || m.MaxParallelFiles > MaxParallelFiles {
		c.add("media.max_parallel_files", "must be between 1 and %d, got %d", MaxParallelFiles, m.MaxParallelFiles)
	}
}
