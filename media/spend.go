package media

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/kairos-agent/kairos"
)

// Transcriptions are priced by the length read from the file itself
// (duration.go), not by what the message declares, and go through the
// spending caps (Config.Spend) like every model call. The file is read
// once: its length is parsed from the bytes as they stream into the
// transcription request, and the call is admitted at the end of the
// stream, before the request goes out (the request's form is sent only
// once it holds the whole file). A refused call ends the stream with an
// error, so no request is made.

// msgNoLength is the sentence for a recording whose length cannot be
// read while a cap applies.
const msgNoLength = "I can't tell how long that recording is, so I can't transcribe it under the spending limits here; please send it as a voice note, or as an Ogg, MP3, M4A, WAV or WebM file."

// errNotAdmitted ends a stream whose transcription was refused.
var errNotAdmitted = errors.New("transcription not admitted")

// meter admits one transcription once its length is known, and records
// it.
type meter struct {
	h  *Handler
	in *kairos.Inbound
	a  *kairos.Attachment

	length   time.Duration
	declared bool // the file did not say: the message's length stands in
	done     func(context.Context, *kairos.UsageRecord)
	refusal  string // the sentence of a refused call
}

// admitted reports whether the call was admitted (done is set).
func (m *meter) admitted() bool { return m.done != nil }

// admit decides the call once the stream ended with the file's length
// (or the parser's error).
func (m *meter) admit(ctx context.Context, d time.Duration, format string, perr error) error {
	if m.admitted() {
		return nil // a retry: admitted already
	}
	h := m.h
	m.length = d
	if perr != nil {
		if h.cfg.Spend != nil && h.cfg.Spend.Capped(m.in.UserKey()) {
			h.log.Info("recording refused: its length cannot be read and a cap applies", "kind", m.a.Kind, "format", format, "err", perr)
			h.cfg.Metrics.MediaFailure(m.a.Kind, "no_length")
			m.refusal = msgNoLength
			return errNotAdmitted
		}
		h.log.Info("recording length unreadable; priced by the length the message declares", "kind", m.a.Kind, "format", format, "err", perr)
		m.length, m.declared = m.a.Duration, true
	}
	if h.cfg.Spend == nil {
		m.done = func(ctx context.Context, rec *kairos.UsageRecord) {
			if rec != nil && h.cfg.Sessions != nil {
				if err := h.cfg.Sessions.RecordUsage(ctx, rec); err != nil {
					h.log.Warn("record transcription usage", "err", err)
				}
			}
		}
		return nil
	}
	done, err := h.cfg.Spend.Begin(ctx, m.spendContext(), kairos.UsageRecord{Model: h.cfg.TranscribeModel, Audio: m.length, Estimated: m.declared})
	if r, capped := kairos.AsSpendRefusal(err); capped {
		m.refusal = r.Message
		return errNotAdmitted
	}
	if err != nil {
		return err
	}
	m.done = done
	return nil
}

func (m *meter) spendContext() kairos.SpendContext {
	return kairos.SpendContext{UserKey: m.in.UserKey(), ThreadKey: m.in.ThreadKey(), Kind: kairos.SpendTranscription}
}

// settle records the transcription (ok) in the thread's session (the one
// the agent's turn then continues), or gives back its place.
func (m *meter) settle(ctx context.Context, ok bool) {
	if !m.admitted() {
		return
	}
	if !ok {
		m.done(ctx, nil)
		return
	}
	in := m.in
	rec := &kairos.UsageRecord{UserKey: in.UserKey(), ThreadKey: in.ThreadKey(), Model: m.h.cfg.TranscribeModel, Audio: m.length,
		Kind: kairos.SpendTranscription, Estimated: m.declared, CreatedAt: in.Date}
	if m.h.cfg.Sessions != nil {
		if sess, err := m.h.cfg.Sessions.OpenSession(ctx, in.ThreadKey(), in.UserKey(), in.Date); err == nil {
			rec.SessionID = sess.ID
		} else {
			m.h.log.Warn("record transcription usage", "err", err)
		}
	}
	m.done(ctx, rec)
}

// lengthReader passes a download through to the transcriber while a
// parser reads the recording's length from the same bytes; at the end of
// the stream the meter admits the call, or the stream fails.
type lengthReader struct {
	ctx    context.Context
	src    io.Reader
	m      *meter
	pw     *io.PipeWriter
	result chan lengthResult
	err    error
	ended  bool
}

type lengthResult struct {
	d      time.Duration
	format string
	err    error
}

func (m *meter) reader(ctx context.Context, src io.Reader) *lengthReader {
	pr, pw := io.Pipe()
	r := &lengthReader{ctx: ctx, src: src, m: m, pw: pw, result: make(chan lengthResult, 1)}
	go func() {
		d, format, err := AudioDuration(pr)
		_, _ = io.Copy(io.Discard, pr) // the rest flows past (bounded memory)
		r.result <- lengthResult{d, format, err}
	}()
	return r
}

func (r *lengthReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.src.Read(p)
	if n > 0 {
		_, _ = r.pw.Write(p[:n]) // fails only once the parser is gone
	}
	if err == io.EOF {
		r.pw.Close()
		res := <-r.result
		r.ended = true
		if aerr := r.m.admit(r.ctx, res.d, res.format, res.err); aerr != nil {
			r.err = aerr
			return n, aerr
		}
		return n, io.EOF
	}
	if err != nil {
		r.err = err
	}
	return n, err
}

// close ends the parser when the transcriber stopped before the end.
func (r *lengthReader) close() {
	if r.ended {
		return
	}
	r.pw.CloseWithError(io.ErrUnexpectedEOF)
	<-r.result
	r.ended = true
}

// speakContext marks a spoken answer's call as the user's.
func speakContext(ctx context.Context, in *kairos.Inbound) context.Context {
	return kairos.WithSpend(ctx, kairos.SpendContext{UserKey: in.UserKey(), ThreadKey: in.ThreadKey(), Kind: kairos.SpendChat})
}
