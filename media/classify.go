package media

import (
	"path"
	"strings"

	"github.com/kairos-agent/kairos"
)

type fileKind int

const (
	kindUnsupported fileKind = iota
	kindAudio
	kindImage
	kindText
	kindPDF
)

var (
	textExts  = []string{".txt", ".text", ".md", ".markdown", ".csv", ".tsv", ".json", ".log"}
	imageExts = []string{".jpg", ".jpeg", ".png", ".gif", ".webp"}
	audioExts = []string{".ogg", ".oga", ".opus", ".mp3", ".m4a", ".wav", ".flac", ".webm"}
)

// classify decides how a file is read, by its Telegram kind, then its MIME
// type, then its file name's extension.
func classify(a *kairos.Attachment) fileKind {
	switch a.Kind {
	case kairos.AttachVoice, kairos.AttachAudio, kairos.AttachVideoNote:
		return kindAudio
	case kairos.AttachPhoto:
		return kindImage
	}
	mime := strings.ToLower(a.MIME)
	ext := strings.ToLower(path.Ext(a.Name))
	switch {
	case mime == "application/pdf" || ext == ".pdf":
		return kindPDF
	case mime == "image/jpeg" || mime == "image/png" || mime == "image/gif" || mime == "image/webp" || contains(imageExts, ext):
		return kindImage
	case contains(textExts, ext) || strings.HasPrefix(mime, "text/") || mime == "application/json" || mime == "application/x-ndjson":
		return kindText
	case strings.HasPrefix(mime, "audio/") || contains(audioExts, ext):
		return kindAudio
	}
	return kindUnsupported
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// describeType names a file's type for a refusal: ".docx", else its MIME.
func describeType(a *kairos.Attachment) string {
	if ext := path.Ext(a.Name); ext != "" && len(ext) <= 10 {
		return strings.ToLower(ext)
	}
	if a.MIME != "" {
		return a.MIME
	}
	return "these"
}
