// Package media reads the files that come with a message before the agent
// sees it: voice notes and audio are transcribed (the transcript becomes
// the user's text), photos and image files are scaled down into data: URLs
// for a vision model, and text, Markdown, CSV, JSON and PDF documents are
// extracted as untrusted text. Files are read for the turn only; a file it
// cannot read gets one clear sentence and never reaches the agent.
// A recording's length, which prices its transcription, is read from its
// own bytes (AudioDuration: Ogg, MP3, MP4, WAV, WebM, FLAC) with bounded
// memory and a bounded read, never from what the message declares.
//
// It imports the root package, golang.org/x/image (WebP, scaling) and
// github.com/ledongthuc/pdf (PDF text layer).
package media
