package testkit

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
)

// InlineButton is one button of an inline keyboard as the bot sent it.
type InlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
}

var inlineButtonActions = []string{
	"url", "callback_data", "web_app", "login_url", "switch_inline_query",
	"switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
	"callback_game", "pay",
}

// validateReplyMarkup checks a reply_markup parameter as Telegram does and
// returns it as compact JSON (nil when absent).
func validateReplyMarkup(raw string) (json.RawMessage, *APIError) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m == nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(raw)); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	switch {
	case m["inline_keyboard"] != nil:
		var rows [][]map[string]json.RawMessage
		if err := json.Unmarshal(m["inline_keyboard"], &rows); err != nil {
			return nil, badRequest("field \"inline_keyboard\" of the InlineKeyboardMarkup must be an Array of Arrays")
		}
		total := 0
		for _, row := range rows {
			for _, b := range row {
				total++
				if aerr := validateInlineButton(b); aerr != nil {
					return nil, aerr
				}
			}
		}
		if total > 100 {
			return nil, badRequest("reply markup is too long")
		}
	case m["keyboard"] != nil:
		var rows [][]json.RawMessage
		if err := json.Unmarshal(m["keyboard"], &rows); err != nil {
			return nil, badRequest("field \"keyboard\" of the ReplyKeyboardMarkup must be an Array of Arrays")
		}
	case m["remove_keyboard"] != nil, m["force_reply"] != nil:
	default:
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	return json.RawMessage(compact.Bytes()), nil
}

func validateInlineButton(b map[string]json.RawMessage) *APIError {
	var text string
	if err := json.Unmarshal(b["text"], &text); err != nil {
		return badRequest("can't parse inline keyboard button: Field \"text\" must be of type String")
	}
	// Checked before the others: go-telegram/bot sends "copy_text":{"text":""}
	// with every button, and Telegram rejects that.
	if raw, ok := b["copy_text"]; ok {
		var ct struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &ct); err != nil || ct.Text == "" || UTF16Len(ct.Text) > 256 {
			return badRequest("BUTTON_COPY_TEXT_INVALID")
		}
	}
	if strings.TrimSpace(text) == "" {
		return badRequest("BUTTON_TEXT_INVALID")
	}
	actions := 0
	for _, k := range inlineButtonActions {
		if _, ok := b[k]; ok {
			actions++
		}
	}
	if actions == 0 {
		return badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
	}
	if raw, ok := b["callback_data"]; ok {
		var data string
		if err := json.Unmarshal(raw, &data); err != nil || len(data) < 1 || len(data) > 64 {
			return badRequest("BUTTON_DATA_INVALID")
		}
	}
	if raw, ok := b["url"]; ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return badRequest("BUTTON_URL_INVALID")
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "tg") || (u.Scheme != "tg" && u.Host == "") {
			return badRequest("BUTTON_URL_INVALID")
		}
	}
	return nil
}

func isInlineKeyboard(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m["inline_keyboard"] != nil
}

func inlineButtons(raw json.RawMessage) []InlineButton {
	if len(raw) == 0 {
		return nil
	}
	var m struct {
		InlineKeyboard [][]InlineButton `json:"inline_keyboard"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []InlineButton
	for _, row := range m.InlineKeyboard {
		out = append(out, row...)
	}
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

func entitiesEqual(a, b []Entity) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
