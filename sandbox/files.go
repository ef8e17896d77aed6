package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
)

// fileInfo is one entry of attachments().
type fileInfo struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	MIME string `json:"mime,omitempty"`
	Size int64  `json:"size"`
}

// fileListing answers attachments(): the current turn's files.
func (c *cell) fileListing() []fileInfo {
	out := make([]fileInfo, 0, len(c.task.Files))
	for _, f := range c.task.Files {
		size := f.Size
		if f.Text != "" {
			size = int64(len(f.Text))
		}
		out = append(out, fileInfo{Name: f.Name, Kind: f.Kind, MIME: f.MIME, Size: size})
	}
	return out
}

// readAttachment answers readAttachment(name): {name, mime, text} for
// text (a document's extracted text, a transcript, UTF-8 files) or {name,
// mime, base64} for other bytes. What it returns counts against the
// bytes-read budget like a response body; past it the cell stops.
func (c *cell) readAttachment(arg string) (any, error) {
	var name string
	if err := json.Unmarshal([]byte(arg), &name); err != nil {
		return nil, jsErr("TypeError", "readAttachment(name): name must be a string")
	}
	var f *kairos.CellFile
	for i := range c.task.Files {
		if c.task.Files[i].Name == name {
			f = &c.task.Files[i]
			break
		}
	}
	if f == nil {
		names := make([]string, 0, len(c.task.Files))
		for _, x := range c.task.Files {
			names = append(names, x.Name)
		}
		return nil, jsErr("ReferenceError", "no attachment %q in this turn; attachments: %v", kairos.Clip(name, 100), names)
	}
	c.mu.Lock()
	room := c.budget.MaxBytesRead - c.bytesRead
	c.mu.Unlock()
	var data []byte
	if f.Text != "" {
		data = []byte(f.Text)
	} else if f.Open != nil {
		rc, err := f.Open(c.ctx)
		if err != nil {
			if c.stopped() {
				return nil, errStopped
			}
			return nil, jsErr("Error", "readAttachment: %s could not be read", kairos.Clip(name, 100))
		}
		data, err = io.ReadAll(io.LimitReader(rc, room+1))
		rc.Close()
		if err != nil {
			if c.stopped() {
				return nil, errStopped
			}
			return nil, jsErr("Error", "readAttachment: %s could not be read", kairos.Clip(name, 100))
		}
	}
	c.mu.Lock()
	c.bytesRead += int64(len(data))
	over := c.bytesRead > c.budget.MaxBytesRead
	c.mu.Unlock()
	if over {
		c.stop(kairos.CatBudget, fmt.Sprintf("bytes-read budget of %d reached", c.budget.MaxBytesRead))
		return nil, errStopped
	}
	if f.Text != "" || utf8.Valid(data) {
		return map[string]string{"name": f.Name, "mime": f.MIME, "text": string(data)}, nil
	}
	return map[string]string{"name": f.Name, "mime": f.MIME, "base64": base64.StdEncoding.EncodeToString(data)}, nil
}
