package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
)

// TranscriptionRequest is one /v1/audio/transcriptions request as the fake
// received it.
type TranscriptionRequest struct {
	Model          string
	FileName       string
	Bytes          int    // size of the uploaded file
	Magic          string // the container the audio's first bytes name: ogg, wav, mp3, flac, webm, mp4, or ""
	ResponseFormat string
	Language       string
	Status         int
	Time           time.Time
}

// SpeechRequest is one /v1/audio/speech request.
type SpeechRequest struct {
	Model          string
	Input          string
	Voice          string
	ResponseFormat string
	Time           time.Time
}

type audioState struct {
	transcripts []string                         // queued answers
	handler     func(TranscriptionRequest) Reply // Reply.Text is the transcript
	requests    []TranscriptionRequest
	speeches    []SpeechRequest
}

// EnqueueTranscript queues transcripts, answered in order by
// /audio/transcriptions (after the audio passed the format check).
func (f *FakeOpenAI) EnqueueTranscript(texts ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.audio.transcripts = append(f.audio.transcripts, texts...)
}

// SetTranscriber answers transcriptions with h (Reply.Text, or an error
// Reply); it is used when no transcript is queued.
func (f *FakeOpenAI) SetTranscriber(h func(TranscriptionRequest) Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.audio.handler = h
}

// TranscriptionRequests returns the transcription requests so far.
func (f *FakeOpenAI) TranscriptionRequests() []TranscriptionRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]TranscriptionRequest(nil), f.audio.requests...)
}

// SpeechRequests returns the speech requests so far.
func (f *FakeOpenAI) SpeechRequests() []SpeechRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]SpeechRequest(nil), f.audio.speeches...)
}

// audioMagic names the audio container from its first bytes, as a
// decoder would sniff it; "" when it is none the API accepts.
func audioMagic(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("OggS")):
		return "ogg"
	case bytes.HasPrefix(b, []byte("RIFF")) && len(b) >= 12 && string(b[8:12]) == "WAVE":
		return "wav"
	case bytes.HasPrefix(b, []byte("ID3")) || len(b) >= 2 && b[0] == 0xFF && b[1]&0xE0 == 0xE0:
		return "mp3"
	case bytes.HasPrefix(b, []byte("fLaC")):
		return "flac"
	case bytes.HasPrefix(b, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		return "webm"
	case len(b) >= 8 && string(b[4:8]) == "ftyp":
		return "mp4"
	}
	return ""
}

// transcriptions answers like OpenAI: multipart with file and model;
// audio whose container it cannot recognise gets 400 "Audio file might be
// corrupted or unsupported"; response_format text answers plain text,
// otherwise {"text": …}.
func (f *FakeOpenAI) transcriptions(w http.ResponseWriter, r *http.Request) {
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		writeOAError(w, 400, "Invalid Content-Type header ("+ct+"), expected multipart/form-data.", "invalid_request_error", "", "")
		return
	}
	req := TranscriptionRequest{Time: time.Now()}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var head []byte
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeOAError(w, 400, "Could not parse multipart form", "invalid_request_error", "", "")
			return
		}
		if part.FormName() == "file" {
			req.FileName = part.FileName()
			buf := make([]byte, 16)
			n, _ := io.ReadFull(part, buf)
			head = buf[:n]
			rest, _ := io.Copy(io.Discard, part)
			req.Bytes = n + int(rest)
			continue
		}
		v, _ := io.ReadAll(io.LimitReader(part, 1<<16))
		switch part.FormName() {
		case "model":
			req.Model = string(v)
		case "response_format":
			req.ResponseFormat = string(v)
		case "language":
			req.Language = string(v)
		}
	}
	req.Magic = audioMagic(head)
	f.mu.Lock()
	idx := len(f.audio.requests)
	f.audio.requests = append(f.audio.requests, req)
	var rep Reply
	switch {
	case req.Model == "":
		rep = ErrorReply(400, "you must provide a model parameter")
	case req.FileName == "":
		rep = ErrorReply(400, "Missing required parameter: 'file'.")
	case req.Magic == "":
		rep = ErrorReply(400, "Audio file might be corrupted or unsupported")
	case len(f.audio.transcripts) > 0:
		rep = TextReply(f.audio.transcripts[0])
		f.audio.transcripts = f.audio.transcripts[1:]
	case f.audio.handler != nil:
		h := f.audio.handler
		f.mu.Unlock()
		rep = h(req)
		f.mu.Lock()
	default:
		rep = TextReply("(fake transcript of " + req.FileName + ")")
	}
	status := 200
	if rep.Status >= 400 {
		status = rep.Status
	}
	f.audio.requests[idx].Status = status
	f.signalLocked()
	f.mu.Unlock()
	if status != 200 {
		writeReplyError(w, rep)
		return
	}
	if req.ResponseFormat == "text" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, rep.Text+"\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"text": rep.Text})
}

// speech answers /audio/speech with an Ogg page header followed by the
// input text (enough for a client to stream and forward).
func (f *FakeOpenAI) speech(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model          string `json:"model"`
		Input          string `json:"input"`
		Voice          string `json:"voice"`
		ResponseFormat string `json:"response_format"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		writeOAError(w, 400, "We could not parse the JSON body of your request.", "invalid_request_error", "", "")
		return
	}
	switch {
	case body.Model == "":
		writeOAError(w, 400, "you must provide a model parameter", "invalid_request_error", "", "")
		return
	case strings.TrimSpace(body.Input) == "":
		writeOAError(w, 400, "[] is too short - 'input'", "invalid_request_error", "", "input")
		return
	case body.Voice == "":
		writeOAError(w, 400, "Missing required parameter: 'voice'.", "invalid_request_error", "", "voice")
		return
	}
	f.mu.Lock()
	f.audio.speeches = append(f.audio.speeches, SpeechRequest{Model: body.Model, Input: body.Input, Voice: body.Voice,
		ResponseFormat: body.ResponseFormat, Time: time.Now()})
	f.signalLocked()
	f.mu.Unlock()
	ctype := "audio/mpeg"
	if body.ResponseFormat == "opus" {
		ctype = "audio/ogg"
	}
	w.Header().Set("Content-Type", ctype)
	io.WriteString(w, "OggS\x00\x02"+body.Input)
}

// contentImages returns the URLs of a message's image_url parts.
func contentImages(raw json.RawMessage) []string {
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	var parts []struct {
		Type     string `json:"type"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var urls []string
	for _, p := range parts {
		if p.Type == "image_url" && p.ImageURL != nil {
			urls = append(urls, p.ImageURL.URL)
		}
	}
	return urls
}
