package testkit

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxBotDownload is the Bot API's limit on files a bot may download.
const MaxBotDownload = 20 << 20

// FileRef is a file the fake holds, as a message refers to it.
type FileRef struct {
	FileID       string
	FileUniqueID string
	FilePath     string // "voice/file_3.oga"; served at /file/bot<token>/<FilePath>
	Size         int64
	Name         string
	MIME         string
}

type fakeFile struct {
	ref  FileRef
	data []byte // nil for a file over the download limit
}

type fileStore struct {
	byID      map[string]*fakeFile
	byPath    map[string]*fakeFile
	seq       int
	downloads []string
	voices    voiceLog
	photos    []SentPhoto // telegram_photo.go
}

func (f *FakeTelegram) filesLocked() *fileStore {
	if f.files == nil {
		f.files = &fileStore{byID: map[string]*fakeFile{}, byPath: map[string]*fakeFile{}}
	}
	return f.files
}

// AddFile stores a file as if a user had uploaded it: folder is the Bot
// API's file_path folder ("voice", "music", "video_notes", "photos",
// "documents").
func (f *FakeTelegram) AddFile(folder, name, mime string, data []byte) FileRef {
	return f.addFile(folder, name, mime, int64(len(data)), data)
}

// AddLargeFile stores a file of size bytes without content: over 20 MB,
// getFile refuses it as Telegram does ("file is too big").
func (f *FakeTelegram) AddLargeFile(folder, name, mime string, size int64) FileRef {
	return f.addFile(folder, name, mime, size, nil)
}

func (f *FakeTelegram) addFile(folder, name, mime string, size int64, data []byte) FileRef {
	f.mu.Lock()
	defer f.mu.Unlock()
	fs := f.filesLocked()
	fs.seq++
	n := strconv.Itoa(fs.seq)
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		ext = name[i:]
	}
	ref := FileRef{
		FileID:       "BQACAgIAAxkBAAI" + n + "fake" + strings.Repeat("x", 8),
		FileUniqueID: "AgAD" + n,
		FilePath:     folder + "/file_" + n + ext,
		Size:         size,
		Name:         name,
		MIME:         mime,
	}
	ff := &fakeFile{ref: ref, data: data}
	fs.byID[ref.FileID] = ff
	fs.byPath[ref.FilePath] = ff
	return ref
}

// Downloads lists the file paths downloaded so far, in order.
func (f *FakeTelegram) Downloads() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		return nil
	}
	return append([]string(nil), f.files.downloads...)
}

// getFile answers as the Bot API does: a File with file_path, or 400 for
// an unknown id or a file over 20 MB.
func (f *FakeTelegram) getFile(p map[string]string) (any, *APIError) {
	id := p["file_id"]
	if id == "" {
		return nil, badRequest("file_id is empty")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ff := f.filesLocked().byID[id]
	if ff == nil {
		return nil, badRequest("invalid file_id")
	}
	if ff.ref.Size > MaxBotDownload {
		return nil, badRequest("file is too big")
	}
	return map[string]any{"file_id": ff.ref.FileID, "file_unique_id": ff.ref.FileUniqueID,
		"file_size": ff.ref.Size, "file_path": ff.ref.FilePath}, nil
}

// serveFile serves GET /file/bot<token>/<file_path>.
func (f *FakeTelegram) serveFile(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/file/bot")
	token, path, ok := strings.Cut(rest, "/")
	f.mu.Lock()
	var ff *fakeFile
	if ok && token == f.token && r.Method == http.MethodGet {
		ff = f.filesLocked().byPath[path]
		if ff != nil && ff.data != nil {
			f.files.downloads = append(f.files.downloads, path)
		}
	}
	f.mu.Unlock()
	if ff == nil || ff.data == nil {
		writeAPIError(w, &APIError{Code: 404, Description: "Not Found"})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(ff.data)))
	w.Write(ff.data)
}

// PushVoice queues a voice note of seconds length.
func (f *FakeTelegram) PushVoice(chatID, userID int64, file FileRef, seconds int, date time.Time, opts ...PushOption) int64 {
	return f.pushMedia(chatID, userID, "voice", map[string]any{"file_id": file.FileID, "file_unique_id": file.FileUniqueID,
		"duration": seconds, "mime_type": orStr(file.MIME, "audio/ogg"), "file_size": file.Size}, "", date, opts)
}

// PushAudio queues an audio file with an optional caption.
func (f *FakeTelegram) PushAudio(chatID, userID int64, file FileRef, seconds int, caption string, date time.Time, opts ...PushOption) int64 {
	return f.pushMedia(chatID, userID, "audio", map[string]any{"file_id": file.FileID, "file_unique_id": file.FileUniqueID,
		"duration": seconds, "file_name": file.Name, "mime_type": file.MIME, "file_size": file.Size}, caption, date, opts)
}

// PushVideoNote queues a round video message.
func (f *FakeTelegram) PushVideoNote(chatID, userID int64, file FileRef, seconds int, date time.Time, opts ...PushOption) int64 {
	return f.pushMedia(chatID, userID, "video_note", map[string]any{"file_id": file.FileID, "file_unique_id": file.FileUniqueID,
		"length": 384, "duration": seconds, "file_size": file.Size}, "", date, opts)
}

// PushPhoto queues a photo of width×height with a caption. As Telegram
// does, a photo larger than 90 px comes with a smaller size first: a
// thumbnail of at most 90 px (its own file; its bytes are not served) and
// then the full size.
func (f *FakeTelegram) PushPhoto(chatID, userID int64, file FileRef, width, height int, caption string, date time.Time, opts ...PushOption) int64 {
	var sizes []map[string]any
	if width > 90 || height > 90 {
		tw, th := 90, max(1, height*90/max(width, 1))
		if height > width {
			tw, th = max(1, width*90/max(height, 1)), 90
		}
		thumb := f.AddLargeFile("photos", "thumb.jpg", "image/jpeg", 1500)
		sizes = append(sizes, map[string]any{"file_id": thumb.FileID, "file_unique_id": thumb.FileUniqueID, "width": tw, "height": th, "file_size": thumb.Size})
	}
	sizes = append(sizes, map[string]any{"file_id": file.FileID, "file_unique_id": file.FileUniqueID, "width": width, "height": height, "file_size": file.Size})
	return f.pushMedia(chatID, userID, "photo", sizes, caption, date, opts)
}

// PushDocument queues a file sent as a document, with a caption.
func (f *FakeTelegram) PushDocument(chatID, userID int64, file FileRef, caption string, date time.Time, opts ...PushOption) int64 {
	return f.pushMedia(chatID, userID, "document", map[string]any{"file_id": file.FileID, "file_unique_id": file.FileUniqueID,
		"file_name": file.Name, "mime_type": file.MIME, "file_size": file.Size}, caption, date, opts)
}

func orStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (f *FakeTelegram) pushMedia(chatID, userID int64, field string, value any, caption string, date time.Time, opts []PushOption) int64 {
	cfg := pushOptions(opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	c, m := f.incomingLocked(chatID, userID, date, cfg)
	c.messages[m.id] = m
	raw, err := json.Marshal(f.messageJSONLocked(c, m, true))
	if err != nil {
		panic(err)
	}
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil {
		panic(err)
	}
	payload[field] = value
	if caption != "" {
		payload["caption"] = caption
		payload["caption_entities"] = autoEntities(caption)
	}
	id := f.enqueueLocked("message", payload)
	f.pushedMsg[id] = [2]int64{chatID, int64(m.id)}
	return id
}

// SentVoice is a voice message the bot sent with sendVoice.
type SentVoice struct {
	MessageID int
	ChatID    int64
	ThreadID  int
	FileName  string
	Audio     []byte
}

type voiceLog struct{ sent []SentVoice }

// SentVoices returns the voice messages the bot sent, in order.
func (f *FakeTelegram) SentVoices() []SentVoice {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		return nil
	}
	return append([]SentVoice(nil), f.files.voices.sent...)
}

// sendVoice accepts an uploaded voice file (multipart) as the Bot API
// does; a voice given as a URL or file_id string is accepted too.
func (f *FakeTelegram) sendVoice(p map[string]string) (any, *APIError) {
	chatID, aerr := chatIDParam(p)
	if aerr != nil {
		return nil, aerr
	}
	v, ok := p["voice"]
	if !ok || v == "" {
		return nil, badRequest("there is no voice in the request")
	}
	name := ""
	if n, ok := strings.CutPrefix(v, "<file:"); ok {
		name = strings.TrimSuffix(n, ">")
	}
	msg, id, aerr := f.sendUpload(p, chatID, func(fs *fileStore, id, thread int) {
		fs.voices.sent = append(fs.voices.sent, SentVoice{MessageID: id, ChatID: chatID, ThreadID: thread, FileName: name, Audio: []byte(p["voice#bytes"])})
	})
	if aerr != nil {
		return nil, aerr
	}
	msg["voice"] = map[string]any{"file_id": "AwACAgIAAxkBAAIvoice" + strconv.Itoa(id), "file_unique_id": "AgADv" + strconv.Itoa(id),
		"duration": 1, "mime_type": "audio/ogg", "file_size": len(p["voice#bytes"])}
	return msg, nil
}

// sendUpload stores the bot's message carrying an upload in chatID (in the
// thread message_thread_id names), has keep log the upload, and returns the
// message as JSON (for the caller to add the media field) and its id.
func (f *FakeTelegram) sendUpload(p map[string]string, chatID int64, keep func(fs *fileStore, id, thread int)) (map[string]any, int, *APIError) {
	thread, _, aerr := intParam(p, "message_thread_id")
	if aerr != nil {
		return nil, 0, aerr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.blockedErrorLocked(chatID); e != nil {
		return nil, 0, e
	}
	c := f.chatLocked(chatID)
	c.nextID++
	m := &storedMessage{id: c.nextID, fromBot: true, from: &f.bot, threadID: int(thread), date: f.now().Unix()}
	c.messages[m.id] = m
	keep(f.filesLocked(), m.id, int(thread))
	f.signalLocked()
	raw, _ := json.Marshal(f.messageJSONLocked(c, m, false))
	var msg map[string]any
	json.Unmarshal(raw, &msg)
	return msg, m.id, nil
}
