package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
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
	admin := e.start()
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
	// Usage: the transcription's audio is accounted beside the chat tokens.
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var audioMS int64
	if err := db.Gorm().Table("token_usage").Where("model = ?", "whisper-1").Select("SUM(audio_ms)").Row().Scan(&audioMS); err != nil {
		t.Fatal(err)
	}
	if audioMS != 4000 {
		t.Errorf("transcription usage = %d ms of audio, want 4000", audioMS)
	}
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`kairos_media_files_total{kind="voice"} 1`, fmt.Sprintf(`kairos_media_bytes_total{kind="voice"} %d`, len(audio)),
		"kairos_media_transcribed_seconds_total 4"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
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
	admin := e.start()
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
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`kairos_media_failures_total{kind="voice",reason="bad_audio"} 1`,
		`kairos_media_failures_total{kind="document",reason="unsupported"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// pngOf returns a w×h PNG with a gradient (so scaling has work to do).
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func setPolicy(t *testing.T, e *env, yaml string) {
	t.Helper()
	if err := os.WriteFile(e.vars["KAIROS_POLICY"], []byte("access:\n  allowed_users: [2002]\n"+yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// imageSize decodes a data: URL's image and returns its size.
func imageSize(t *testing.T, url string) (int, int) {
	t.Helper()
	b64, ok := strings.CutPrefix(url, "data:image/jpeg;base64,")
	if !ok {
		t.Fatalf("image part is not a JPEG data: URL: %.60s", url)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Width, cfg.Height
}

func TestPhotoWithCaptionReachesVisionModel(t *testing.T) {
	e := newEnv(t)
	setPolicy(t, e, "media:\n  vision: true\n  max_image_side: 512\n")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		m := r.Messages[len(r.Messages)-1]
		return testkit.TextReply(fmt.Sprintf("I see %d image(s); you asked: %s", len(m.Images), m.Content))
	})
	e.start()
	f := e.tg.AddFile("photos", "file.png", "image/png", pngOf(t, 1200, 800))
	e.tg.PushPhoto(2002, 2002, f, 1200, 800, "what is on this receipt?", time.Now())
	waitReply(t, e.tg, 2002, 1, "I see 1 image(s); you asked: what is on this receipt?")
	req := e.llm.LastRequest()
	user := req.Messages[len(req.Messages)-1]
	if req.Model != "test-model" || len(user.Images) != 1 {
		t.Fatalf("model %q, images %d", req.Model, len(user.Images))
	}
	if w, h := imageSize(t, user.Images[0]); w != 512 || h != 341 {
		t.Errorf("image sent as %d×%d, want 512×341 (scaled to media.max_image_side)", w, h)
	}
	// Images are kept for the turn only: the next turn's history has none.
	e.tg.PushText(2002, 2002, "thanks", time.Now())
	waitReply(t, e.tg, 2002, 2, "you asked: thanks")
	for _, m := range e.llm.LastRequest().Messages {
		if len(m.Images) > 0 || strings.Contains(m.Content, "base64") {
			t.Fatalf("an image outlived its turn: %+v", m.Role)
		}
	}
}

func TestPhotoWithoutVision(t *testing.T) {
	e := newEnv(t)
	e.start()
	f := e.tg.AddFile("photos", "file.png", "image/png", pngOf(t, 64, 64))
	e.tg.PushPhoto(2002, 2002, f, 64, 64, "", time.Now())
	waitReply(t, e.tg, 2002, 1, "I can't look at images")
	if len(e.llm.Requests()) != 0 || len(e.tg.Downloads()) != 0 {
		t.Error("without vision the photo was downloaded or sent to the model")
	}
}

func TestVisionModelAnswersImageTurns(t *testing.T) {
	e := newEnv(t)
	e.vars["KAIROS_VISION_MODEL"] = "vision-model"
	e.start()
	f := e.tg.AddFile("documents", "chart.png", "image/png", pngOf(t, 100, 50))
	e.tg.PushDocument(2002, 2002, f, "explain the chart", time.Now())
	waitReply(t, e.tg, 2002, 1, "echo: explain the chart")
	if rs := e.llm.RequestsFor("vision-model"); len(rs) != 1 || len(rs[0].Messages[len(rs[0].Messages)-1].Images) != 1 {
		t.Fatalf("vision model requests = %d", len(rs))
	}
	e.tg.PushText(2002, 2002, "and now text", time.Now())
	waitReply(t, e.tg, 2002, 2, "echo: and now text")
	if e.llm.LastRequest().Model != "test-model" {
		t.Errorf("a text turn went to %q", e.llm.LastRequest().Model)
	}
}

func TestPDFDocumentIsUntrustedAndTaintsTheTurn(t *testing.T) {
	e := newEnv(t)
	setPolicy(t, e, "approvals:\n  required: []\n  timeout: PT1S\nclock:\n  inference:\n    require_confirmation_for_impactful_actions: false\n")
	pdf := testkit.MakePDF([]string{"Quarterly report\nRevenue grew 12%.", injections[0]})
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "untrusted_document"):
			// A model that obeys the injected instruction.
			return testkit.ToolReply(testkit.ToolCall{Name: "memory", Arguments: `{"action":"forget","memory_id":"m1"}`})
		default:
			return testkit.TextReply("Done: " + last.Content)
		}
	})
	e.start()
	f := e.tg.AddFile("documents", "report.pdf", "application/pdf", pdf)
	e.tg.PushDocument(2002, 2002, f, "summarise this", time.Now())
	got := waitReply(t, e.tg, 2002, 1, "Approval needed")
	if !strings.Contains(got, "a document") {
		t.Errorf("approval reason does not name the untrusted document: %q", got)
	}
	var user testkit.ChatMessage
	for _, m := range e.llm.Requests()[0].Messages {
		if m.Role == "user" {
			user = m
		}
	}
	var doc struct {
		Doc struct {
			Name string `json:"file_name"`
			Text string `json:"text"`
		} `json:"untrusted_document"`
	}
	if sys := e.llm.Requests()[0].SystemPrompt(); !strings.Contains(sys, "files (report.pdf)") || !strings.Contains(sys, "readAttachment(name)") {
		t.Errorf("the system prompt does not tell how cells read the file: %q", sys)
	}
	_, fenced, _ := strings.Cut(user.Content, "\n\n")
	if !strings.HasPrefix(user.Content, "summarise this") || json.Unmarshal([]byte(fenced), &doc) != nil ||
		doc.Doc.Name != "report.pdf" || !strings.Contains(doc.Doc.Text, "Revenue grew 12%.") {
		t.Fatalf("user message = %.300q", user.Content)
	}
}

func TestDocumentKinds(t *testing.T) {
	e := newEnv(t)
	setPolicy(t, e, "media:\n  vision: true\n  max_document_bytes: 4096\n")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		return testkit.TextReply("read: " + r.LastUserMessage())
	})
	e.start()
	huge := make([]byte, 19_900_000) // a PNG header declaring 30000×30000, padded to 19.9 MB
	copy(huge, pngHeader(30000, 30000))
	cases := []struct {
		name, file, mime string
		data             []byte
		want             string
		model            bool // reaches the model
	}{
		{"markdown", "notes.md", "text/markdown", []byte("# Plan\n- buy milk\n"), `"text":"# Plan\n- buy milk\n"`, true},
		{"csv", "data.csv", "text/csv", []byte("a,b\n1,2\n"), `a,b\n1,2`, true},
		{"json", "conf.json", "application/json", []byte(`{"k": 1}`), `{\"k\": 1}`, true},
		{"empty pdf", "blank.pdf", "application/pdf", testkit.MakePDF([]string{""}), "“blank.pdf” has no text I can read", false},
		{"password pdf", "locked.pdf", "application/pdf", testkit.MakePDF([]string{"x"}, testkit.PDFEncrypted()), "“locked.pdf” is password-protected", false},
		{"too long", "long.txt", "text/plain", bytes.Repeat([]byte("word "), 2000), "“long.txt” is too long for me", false},
		{"binary as text", "data.txt", "text/plain", []byte{0xff, 0xfe, 0, 1}, "doesn't look like a text file", false},
		{"19.9 MB image", "huge.png", "image/png", huge, "That image is too large for me to open (30000×30000 pixels", false},
		{"corrupt image", "broken.jpg", "image/jpeg", []byte("\xff\xd8\xff\xe0garbage"), "couldn't open that image", false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.llm.Requests())
			f := e.tg.AddFile("documents", tc.file, tc.mime, tc.data)
			e.tg.PushDocument(2002, 2002, f, "", time.Now())
			if tc.model {
				waitReply(t, e.tg, 2002, i+1, "read: ")
				if u := e.llm.LastRequest().LastUserMessage(); !strings.Contains(u, tc.want) || !strings.Contains(u, `"file_name":"`+tc.file+`"`) {
					t.Errorf("user message %q lacks %q", u, tc.want)
				}
				return
			}
			waitReply(t, e.tg, 2002, i+1, tc.want)
			if len(e.llm.Requests()) != before {
				t.Error("bad input reached the model")
			}
		})
	}
}

// pngHeader is a PNG signature and IHDR chunk for w×h (CRC included).
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 17)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	ihdr[12], ihdr[13] = 8, 6 // 8-bit RGBA
	binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(ihdr)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr))
	return b.Bytes()
}

func TestVoiceRepliesToggle(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.tg.PushText(2002, 2002, "/voice", time.Now())
	waitReply(t, e.tg, 2002, 1, "Voice replies are off")
	e.tg.PushText(2002, 2002, "/voice on", time.Now())
	waitReply(t, e.tg, 2002, 2, "Voice replies are on")
	e.tg.PushText(2002, 2002, "say **hello**", time.Now())
	waitReply(t, e.tg, 2002, 3, "echo: say hello")
	deadline := testkit.GiveUpAt(t)
	for len(e.tg.SentVoices()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	vs := e.tg.SentVoices()
	if len(vs) != 1 || vs[0].ChatID != 2002 || !strings.HasPrefix(string(vs[0].Audio), "OggS") {
		t.Fatalf("voices sent = %+v", vs)
	}
	sp := e.llm.SpeechRequests()
	if len(sp) != 1 || sp[0].Input != "echo: say hello" || sp[0].ResponseFormat != "opus" || sp[0].Model != "tts-1" {
		t.Fatalf("speech requests = %+v", sp)
	}
	// Another user keeps text only; /voice off stops it.
	e.tg.PushText(operatorID, operatorID, "hi", time.Now())
	waitReply(t, e.tg, operatorID, 1, "echo: hi")
	e.tg.PushText(2002, 2002, "/voice off", time.Now())
	waitReply(t, e.tg, 2002, 4, "Voice replies are off")
	e.tg.PushText(2002, 2002, "quiet now", time.Now())
	waitReply(t, e.tg, 2002, 5, "echo: quiet now")
	if n := len(e.llm.SpeechRequests()); n != 1 {
		t.Errorf("speech requests = %d after /voice off and another user's turn, want 1", n)
	}
	if !slices.ContainsFunc(e.tg.Commands(), func(c testkit.BotCommand) bool { return c.Command == "voice" }) {
		t.Error("/voice is not in the command menu")
	}
}

func TestMediaDisabled(t *testing.T) {
	e := newEnv(t)
	setPolicy(t, e, "media:\n  enabled: false\n")
	e.start()
	f := e.tg.AddFile("voice", "file.oga", "audio/ogg", oggVoice(1024))
	e.tg.PushVoice(2002, 2002, f, 1, time.Now())
	waitReply(t, e.tg, 2002, 1, "I only read text messages here")
	if len(e.tg.Downloads()) != 0 || len(e.llm.TranscriptionRequests()) != 0 {
		t.Error("a file was read with media disabled")
	}
	if slices.ContainsFunc(e.tg.Commands(), func(c testkit.BotCommand) bool { return c.Command == "voice" }) {
		t.Error("/voice offered with media disabled")
	}
}

func TestCodeCellReadsTheTurnsAttachment(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "user" {
			return testkit.ToolReply(testkit.ToolCall{Name: "code", Arguments: `{"action":"execute","code":"const f = attachments()[0]; const rows = readAttachment(f.name).text.trim().split('\\n'); output({name: f.name, rows: rows.length, sum: rows.slice(1).reduce((s, r) => s + Number(r.split(',')[1]), 0)})"}`})
		}
		return testkit.TextReply("cell said: " + last.Content)
	})
	e.start()
	f := e.tg.AddFile("documents", "spend.csv", "text/csv", []byte("item,eur\ncoffee,3\nbook,17\n"))
	e.tg.PushDocument(2002, 2002, f, "total?", time.Now())
	waitReply(t, e.tg, 2002, 1, `"result":{"name":"spend.csv","rows":3,"sum":20}`)
}

func TestAudioKinds(t *testing.T) {
	e := newEnv(t)
	setPolicy(t, e, "media:\n  show_transcript: false\n")
	e.start()
	// An audio file with a caption: transcript, then the caption.
	e.llm.EnqueueTranscript("minutes of the call")
	mp3 := append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), make([]byte, 2048)...)
	f := e.tg.AddFile("music", "call.mp3", "audio/mpeg", mp3)
	e.tg.PushAudio(2002, 2002, f, 95, "list the action items", time.Now())
	got := waitReply(t, e.tg, 2002, 1, "echo: minutes of the call\n\nlist the action items")
	if strings.Contains(got, "🎙") {
		t.Errorf("show_transcript: false still quoted the transcript: %q", got)
	}
	// A video note: its sound is transcribed (MP4 container).
	e.llm.EnqueueTranscript("hello from a round video")
	mp4 := append([]byte("\x00\x00\x00\x18ftypmp42"), make([]byte, 1024)...)
	v := e.tg.AddFile("video_notes", "file.mp4", "video/mp4", mp4)
	e.tg.PushVideoNote(2002, 2002, v, 6, time.Now())
	waitReply(t, e.tg, 2002, 2, "echo: hello from a round video")
	// Silence: the server hears no words.
	e.llm.EnqueueTranscript("")
	s := e.tg.AddFile("voice", "file.oga", "audio/ogg", oggVoice(512))
	before := len(e.llm.Requests())
	e.tg.PushVoice(2002, 2002, s, 1, time.Now())
	waitReply(t, e.tg, 2002, 3, "couldn't hear any words")
	if len(e.llm.Requests()) != before {
		t.Error("an empty transcript reached the model")
	}
	trs := e.llm.TranscriptionRequests()
	if len(trs) != 3 || trs[0].FileName != "call.mp3" || trs[1].Magic != "mp4" {
		t.Fatalf("transcriptions = %+v", trs)
	}
}

func TestGroupPhotoNeedsMention(t *testing.T) {
	e := newEnv(t)
	setPolicy(t, e, "media:\n  vision: true\n")
	e.start()
	group := int64(-100555)
	f := e.tg.AddFile("photos", "file.png", "image/png", pngOf(t, 32, 32))
	e.tg.PushPhoto(group, 2002, f, 32, 32, "nice view", time.Now(), testkit.AsGroup("Friends"))
	e.tg.PushPhoto(group, 2002, f, 32, 32, "@"+e.tg.BotUsername()+" where is this?", time.Now(), testkit.AsGroup("Friends"))
	defer func() {
		if t.Failed() {
			t.Log(e.logs.String())
		}
	}()
	waitReply(t, e.tg, group, 1, "where is this?")
	if n := len(e.llm.Requests()); n != 1 {
		t.Errorf("model calls = %d, want 1 (only the photo whose caption mentions the bot)", n)
	}
}

func TestStoreImages(t *testing.T) {
	e := newEnv(t)
	setPolicy(t, e, "media:\n  vision: true\n  store_images: true\n")
	e.start()
	f := e.tg.AddFile("photos", "file.png", "image/png", pngOf(t, 200, 100))
	e.tg.PushPhoto(2002, 2002, f, 200, 100, "keep this", time.Now())
	waitReply(t, e.tg, 2002, 1, "echo: keep this")
	files, _ := filepath.Glob(filepath.Join(e.vars["KAIROS_DATA_DIR"], "media", "*.jpg"))
	if len(files) != 1 {
		t.Fatalf("stored images = %q, want one", files)
	}
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var content string
	if err := db.Gorm().Table("messages").Where("role = ?", "user").Select("content").Row().Scan(&content); err != nil {
		t.Fatal(err)
	}
	if want := "[photo: media/" + filepath.Base(files[0]) + "] keep this"; content != want {
		t.Errorf("session message = %q, want %q", content, want)
	}
}

func TestSeparateTranscriptionServer(t *testing.T) {
	e := newEnv(t)
	whisper := testkit.NewFakeOpenAI(t)
	whisper.EnqueueTranscript("via the local whisper server")
	e.vars["KAIROS_TRANSCRIBE_URL"] = whisper.URL()
	e.vars["KAIROS_TRANSCRIBE_MODEL"] = "large-v3"
	e.start()
	f := e.tg.AddFile("voice", "file.oga", "audio/ogg", oggVoice(2048))
	e.tg.PushVoice(2002, 2002, f, 3, time.Now())
	waitReply(t, e.tg, 2002, 1, "echo: via the local whisper server")
	if trs := whisper.TranscriptionRequests(); len(trs) != 1 || trs[0].Model != "large-v3" {
		t.Fatalf("whisper server got %+v", trs)
	}
	if n := len(e.llm.TranscriptionRequests()); n != 0 {
		t.Errorf("the chat endpoint got %d transcriptions", n)
	}
}
