-- Media: the audio a transcription call consumed is accounted beside tokens.
ALTER TABLE token_usage ADD COLUMN audio_ms BIGINT NOT NULL DEFAULT 0;
