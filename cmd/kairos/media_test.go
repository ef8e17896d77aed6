package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// oggVoice is the start of a real Ogg/Opus voice note (capture pattern,
// version, BOS page) padded to n bytes.
func oggVoice(n int) []byte {
	b := make([]byte, n)
	copy(b, "OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00OpusHead")
	return b
}

func TestVoiceNoteIsTranscribedAndAnswered(t *testing.T) {
	e := newEnv(t)
	e.llm.EnqueueTranscript("what did I say about Porto")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		return testkit.TextReply("You asked: " + r.LastUserMessage())
	})
	e.start()
	audio := oggVoice(64 << 10)
	f := e.tg.AddFile("voice", "file.oga", "audio/ogg", audio)
	e.tg.PushVoice(2002, 2002, f, 4, time.Now())
	got := waitReply(t, e.tg, 2002, 1, "You asked: what did I say about Porto")
	if !strings.Contains(got, "🎙 what did I say about Porto") {
		t.Errorf("reply does not show what was heard: %q", got)
	}
	trs := e.llm.TranscriptionRequests()
	if len(trs) != 1 || trs[0].Model != "whisper-1" || trs[0].Bytes != len(audio) || trs[0].Magic != "ogg" {
		t.Fatalf("transcription requests = %+v", trs)
	}
	if d := e.tg.Downloads(); !slices.Equal(d, []string{f.FilePath}) {
		t.Errorf("downloads = %q, want the voice note once", d)
	}
	// The transcript is the user's own words: not fenced as untrusted.
	last := e.llm.LastRequest()
	if u := last.LastUserMessage(); u != "what did I say about Porto" {
		t.Errorf("user message to the model = %q", u)
	}
	if strings.Contains(e.logs.String(), e.tg.Token()) {
		t.Error("the log contains the bot token (file URL)")
	}
}

func TestVoiceNoteTranscriptionRetriedThenApology(t *testing.T) {
	e := newEnv(t)
	e.llm.InjectError("audio/transcriptions", 1, 503, "The server is overloaded")
	e.llm.EnqueueTranscript("second try works")
	e.start()
	f := e.tg.AddFile("voice", "file.oga", "audio/ogg", oggVoice(4096))
	e.tg.PushVoice(2002, 2002, f, 2, time.Now())
	waitReply(t, e.tg, 2002, 1, "echo: second try works")
	if n := len(e.tg.Downloads()); n != 2 {
		t.Errorf("downloads = %d, want 2 (the retry streams the file anew)", n)
	}

	// Every attempt fails: one short apology, nothing reaches the model.
	e.llm.InjectError("audio/transcriptions", 10, 500, "")
	before := len(e.llm.Requests())
	e.tg.PushVoice(2002, 2002, f, 2, time.Now())
	waitReply(t, e.tg, 2002, 2, "couldn't transcribe that voice message")
	if len(e.llm.Requests()) != before {
		t.Error("a failed transcription reached the chat model")
	}
}

func TestMediaBadInputs(t *testing.T) {
	e := newEnv(t)
	e.start()
	cases := []struct {
		name string
		push func() int64
		want string
	}{
		{"corrupt audio", func() int64 {
			f := e.tg.AddFile("voice", "file.oga", "audio/ogg", []byte("this is not audio at all"))
			return e.tg.PushVoice(2002, 2002, f, 1, time.Now())
		}, "couldn't read that audio"},
		{"over 20 MB", func() int64 {
			f := e.tg.AddLargeFile("documents", "scan.pdf", "application/pdf", 25<<20)
			return e.tg.PushDocument(2002, 2002, f, "", time.Now())
		}, "25.0 MB; Telegram lets me download files up to 20 MB"},
		{"unsupported type", func() int64 {
			f := e.tg.AddFile("documents", "report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", []byte("PK\x03\x04"))
			return e.tg.PushDocument(2002, 2002, f, "", time.Now())
		}, "I can't read .docx files"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.llm.Requests())
			tc.push()
			waitReply(t, e.tg, 2002, i+1, tc.want)
			if len(e.llm.Requests()) != before {
				t.Error("bad input reached the chat model")
			}
		})
	}
}
