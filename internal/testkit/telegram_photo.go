package testkit

import (
	"strconv"
)

// SentPhoto is a photo the bot sent with sendPhoto (an uploaded file).
type SentPhoto struct {
	MessageID int
	ChatID    int64
	ThreadID  int
	Caption   string
	Image     []byte
}

// SentPhotos returns the photos the bot sent, in order.
func (f *FakeTelegram) SentPhotos() []SentPhoto {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		return nil
	}
	return append([]SentPhoto(nil), f.files.photos...)
}

// sendPhoto accepts an uploaded photo (multipart) as the Bot API does.
func (f *FakeTelegram) sendPhoto(p map[string]string) (any, *APIError) {
	chatID, aerr := chatIDParam(p)
	if aerr != nil {
		return nil, aerr
	}
	data, ok := p["photo#bytes"]
	if !ok || data == "" {
		return nil, badRequest("there is no photo in the request")
	}
	if len(p["caption"]) > 1024*4 {
		return nil, badRequest("message caption is too long")
	}
	msg, id, aerr := f.sendUpload(p, chatID, func(fs *fileStore, id, thread int) {
		fs.photos = append(fs.photos, SentPhoto{MessageID: id, ChatID: chatID, ThreadID: thread, Caption: p["caption"], Image: []byte(data)})
	})
	if aerr != nil {
		return nil, aerr
	}
	msg["photo"] = []map[string]any{{"file_id": "AgACAgIAAxkBphoto" + strconv.Itoa(id), "file_unique_id": "AQADp" + strconv.Itoa(id),
		"width": 800, "height": 400, "file_size": len(data)}}
	msg["caption"] = p["caption"]
	return msg, nil
}
