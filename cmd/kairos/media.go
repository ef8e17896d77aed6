package main

import (
	"github.com/kairos-agent/kairos/media"
	"github.com/kairos-agent/kairos/openai"
)

// newMedia wires the media step in front of the agent: transcription on
// the chat endpoint or KAIROS_TRANSCRIBE_URL, vision per policy or
// KAIROS_VISION_MODEL.
func (m *Main) newMedia(c *core) *media.Handler {
	audio := c.model.Audio(openai.AudioConfig{BaseURL: m.Config.TranscribeURL, TranscribeModel: m.Config.TranscribeModel})
	return media.New(media.Config{Next: c.agent, Transcriber: audio, Policy: c.policy,
		VisionModel: m.Config.VisionModel, Metrics: c.metrics, Logger: c.log})
}
