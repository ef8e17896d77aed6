package obs

import "time"

func (m *Metrics) declareMedia() {
	m.declare("kairos_media_files_total", "counter", "Files read from messages, by kind.", nil)
	m.declare("kairos_media_bytes_total", "counter", "Bytes of files read from messages, by kind.", nil)
	m.declare("kairos_media_transcribed_seconds_total", "counter", "Seconds of audio transcribed.", nil)
	m.declare("kairos_media_failures_total", "counter", "Files that could not be read, by kind and reason.", nil)
}

// MediaFile counts a file read and its bytes.
func (m *Metrics) MediaFile(kind string, bytes int64) {
	m.add("kairos_media_files_total", 1, "kind", kind)
	m.add("kairos_media_bytes_total", float64(bytes), "kind", kind)
}

// Transcribed adds the length of transcribed audio.
func (m *Metrics) Transcribed(audio time.Duration) {
	m.add("kairos_media_transcribed_seconds_total", audio.Seconds())
}

// MediaFailure counts a file that could not be read.
func (m *Metrics) MediaFailure(kind, reason string) {
	m.add("kairos_media_failures_total", 1, "kind", kind, "reason", reason)
}
