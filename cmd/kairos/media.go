package main

import (
	"context"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/media"
	"github.com/kairos-agent/kairos/openai"
	"github.com/kairos-agent/kairos/usage"
)

// newMedia wires the media step in front of the agent: transcription on
// the chat endpoint or KAIROS_TRANSCRIBE_URL, vision per policy or
// KAIROS_VISION_MODEL.
func (m *Main) newMedia(c *core) *media.Handler {
	audio := c.model.Audio(openai.AudioConfig{BaseURL: m.Config.TranscribeURL, TranscribeModel: m.Config.TranscribeModel})
	speaker := &usage.Speaker{Next: audio, Model: openai.DefaultSpeechModel, Guard: c.usage}
	return media.New(media.Config{Next: c.agent, Transcriber: audio, Speaker: speaker, Prefs: c.updates, Policy: c.policy,
		TranscribeModel: m.Config.TranscribeModel, DataDir: m.Config.DataDir, Sessions: c.sessions, Spend: c.usage, Clock: c.clock,
		VisionModel: m.Config.VisionModel, Metrics: c.metrics, Logger: c.log})
}

// addMediaCommands offers /voice when the policy in force at start allows
// voice replies (a later policy that disables them answers it with a
// sentence; the menu is registered once).
func (m *Main) addMediaCommands(c *core, t *desk.Table) {
	t.Add(desk.Command{Name: "voice", Description: "Voice replies: /voice on or /voice off",
		Available: c.media.VoiceOffered,
		Run: func(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
			return c.media.VoiceCommand(ctx, in, args)
		}})
}
