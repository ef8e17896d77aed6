package testkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// --- methods ---------------------------------------------------------------

func (f *FakeTelegram) getMe() any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return map[string]any{
		"id":                          f.bot.ID,
		"is_bot":                      true,
		"first_name":                  f.bot.FirstName,
		"username":                    f.bot.Username,
		"can_join_groups":             true,
		"can_read_all_group_messages": false,
		"supports_inline_queries":     false,
		"can_connect_to_business":     false,
		"has_main_web_app":            false,
	}
}

func intParam(p map[string]string, name string) (int64, bool, *APIError) {
	v, ok := p[name]
	if !ok || v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, true, badRequest("invalid %s specified", name)
	}
	return n, true, nil
}

func boolParam(p map[string]string, name string) bool {
	v := strings.ToLower(strings.TrimSpace(p[name]))
	return v == "true" || v == "1"
}

func chatIDParam(p map[string]string) (int64, *APIError) {
	v, ok := p["chat_id"]
	if !ok || strings.TrimSpace(v) == "" {
		return 0, badRequest("chat_id is empty")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n == 0 {
		return 0, badRequest("chat not found")
	}
	return n, nil
}

func (f *FakeTelegram) blockedErrorLocked(chatID int64) *APIError {
	if !f.blocked[chatID] {
		return nil
	}
	if chatID > 0 {
		return &APIError{Code: 403, Description: "Forbidden: bot was blocked by the user"}
	}
	return &APIError{Code: 403, Description: "Forbidden: bot was kicked from the supergroup chat"}
}

// parseOutgoingText applies Telegram's checks to a text parameter.
func parseOutgoingText(p map[string]string) (plain string, ents []Entity, aerr *APIError) {
	text, ok := p["text"]
	if !ok {
		return "", nil, badRequest("message text is empty")
	}
	mode := p["parse_mode"]
	plain, ents, err := ParseEntities(text, mode)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return "", nil, badRequest("can't parse entities: %s", pe.Description)
		}
		return "", nil, badRequest("unsupported parse_mode")
	}
	if mode == "" {
		if raw := p["entities"]; raw != "" {
			var given []Entity
			if err := json.Unmarshal([]byte(raw), &given); err != nil {
				return "", nil, badRequest("can't parse entities JSON object")
			}
			ents = given
		}
	}
	if strings.TrimSpace(plain) == "" {
		return "", nil, badRequest("message text is empty")
	}
	if UTF16Len(plain) > MaxMessageLength {
		return "", nil, badRequest("message is too long")
	}
	return plain, ents, nil
}

func (f *FakeTelegram) sendMessage(p map[string]string) (any, *APIError) {
	chatID, aerr := chatIDParam(p)
	if aerr != nil {
		return nil, aerr
	}
	plain, ents, aerr := parseOutgoingText(p)
	if aerr != nil {
		return nil, aerr
	}
	markup, aerr := validateReplyMarkup(p["reply_markup"])
	if aerr != nil {
		return nil, aerr
	}
	threadID, _, aerr := intParam(p, "message_thread_id")
	if aerr != nil {
		return nil, aerr
	}
	replyTo, allowNoReply, aerr := replyParams(p)
	if aerr != nil {
		return nil, aerr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.blockedErrorLocked(chatID); e != nil {
		return nil, e
	}
	c := f.chatLocked(chatID)
	if threadID != 0 && c.known && c.isForum && !c.threads[int(threadID)] {
		return nil, badRequest("message thread not found")
	}
	if replyTo != 0 {
		if m := c.messages[replyTo]; m == nil || m.deleted {
			if !allowNoReply {
				return nil, badRequest("message to be replied not found")
			}
			replyTo = 0
		}
	}
	now := f.now()
	if f.rateLimit > 0 {
		if last, ok := f.lastSend[chatID]; ok && now.Sub(last) < f.rateLimit {
			return nil, &APIError{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", f.rateRetry), RetryAfter: f.rateRetry}
		}
		f.lastSend[chatID] = now
	}
	c.nextID++
	s := &SentMessage{
		MessageID:   c.nextID,
		ChatID:      chatID,
		ThreadID:    int(threadID),
		ReplyTo:     replyTo,
		Text:        p["text"],
		ParseMode:   p["parse_mode"],
		PlainText:   plain,
		Entities:    ents,
		ReplyMarkup: markup,
		Time:        now,
	}
	m := &storedMessage{
		id: c.nextID, fromBot: true, from: &User{ID: f.bot.ID, IsBot: true, FirstName: f.bot.FirstName, Username: f.bot.Username},
		threadID: int(threadID), date: now.Unix(), text: plain, entities: ents, markup: markup, sent: s, replyToID: replyTo,
	}
	c.messages[m.id] = m
	f.sent = append(f.sent, s)
	f.signalLocked()
	return f.messageJSONLocked(c, m, true), nil
}

func replyParams(p map[string]string) (int, bool, *APIError) {
	allow := boolParam(p, "allow_sending_without_reply")
	if raw := p["reply_parameters"]; raw != "" {
		var rp struct {
			MessageID                int  `json:"message_id"`
			AllowSendingWithoutReply bool `json:"allow_sending_without_reply"`
		}
		if err := json.Unmarshal([]byte(raw), &rp); err != nil {
			return 0, false, badRequest("can't parse reply parameters JSON object")
		}
		if rp.MessageID == 0 {
			return 0, false, badRequest("message to be replied not found")
		}
		return rp.MessageID, rp.AllowSendingWithoutReply || allow, nil
	}
	id, _, aerr := intParam(p, "reply_to_message_id")
	return int(id), allow, aerr
}

func (f *FakeTelegram) findBotMessageLocked(p map[string]string, verb string) (*chatState, *storedMessage, *APIError) {
	if p["inline_message_id"] != "" {
		return nil, nil, badRequest("MESSAGE_ID_INVALID")
	}
	chatID, aerr := chatIDParam(p)
	if aerr != nil {
		return nil, nil, aerr
	}
	msgID, ok, aerr := intParam(p, "message_id")
	if aerr != nil {
		return nil, nil, aerr
	}
	if !ok {
		return nil, nil, badRequest("message identifier is not specified")
	}
	c := f.chats[chatID]
	if c == nil {
		return nil, nil, badRequest("chat not found")
	}
	m := c.messages[int(msgID)]
	if m == nil || m.deleted {
		return nil, nil, badRequest("message to %s not found", verb)
	}
	return c, m, nil
}

func (f *FakeTelegram) editMessage(p map[string]string, method string) (any, *APIError) {
	var (
		plain string
		ents  []Entity
		aerr  *APIError
	)
	if method == "editMessageText" {
		plain, ents, aerr = parseOutgoingText(p)
		if aerr != nil {
			return nil, aerr
		}
	}
	markup, aerr := validateReplyMarkup(p["reply_markup"])
	if aerr != nil {
		return nil, aerr
	}
	if markup != nil && !isInlineKeyboard(markup) {
		return nil, badRequest("inline keyboard expected")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, m, aerr := f.findBotMessageLocked(p, "edit")
	if aerr != nil {
		return nil, aerr
	}
	if !m.fromBot {
		return nil, badRequest("message can't be edited")
	}
	if method == "editMessageReplyMarkup" {
		plain, ents = m.text, m.entities
	}
	if plain == m.text && entitiesEqual(ents, m.entities) && jsonEqual(markup, m.markup) {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	now := f.now()
	m.text, m.entities, m.markup = plain, ents, markup
	e := Edit{
		Method: method, ChatID: c.id, MessageID: m.id, PlainText: plain, Entities: ents,
		ReplyMarkup: markup, Time: now,
	}
	if method == "editMessageText" {
		e.Text, e.ParseMode = p["text"], p["parse_mode"]
	}
	if m.sent != nil {
		m.sent.Edits = append(m.sent.Edits, e)
	}
	f.edits = append(f.edits, e)
	f.signalLocked()
	out := f.messageJSONLocked(c, m, true)
	out.EditDate = now.Unix()
	return out, nil
}

func (f *FakeTelegram) deleteMessage(p map[string]string) (any, *APIError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, m, aerr := f.findBotMessageLocked(p, "delete")
	if aerr != nil {
		return nil, aerr
	}
	m.deleted = true
	if m.sent != nil {
		m.sent.Deleted = true
	}
	f.signalLocked()
	return true, nil
}

var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true,
	"record_voice": true, "upload_voice": true, "upload_document": true, "choose_sticker": true,
	"find_location": true, "record_video_note": true, "upload_video_note": true,
}

func (f *FakeTelegram) sendChatAction(p map[string]string) (any, *APIError) {
	chatID, aerr := chatIDParam(p)
	if aerr != nil {
		return nil, aerr
	}
	if !chatActions[p["action"]] {
		return nil, badRequest("wrong parameter action in request")
	}
	threadID, _, aerr := intParam(p, "message_thread_id")
	if aerr != nil {
		return nil, aerr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.blockedErrorLocked(chatID); e != nil {
		return nil, e
	}
	f.actions = append(f.actions, ChatAction{ChatID: chatID, ThreadID: int(threadID), Action: p["action"], Time: f.now()})
	f.signalLocked()
	return true, nil
}

func (f *FakeTelegram) answerCallbackQuery(p map[string]string) (any, *APIError) {
	id := p["callback_query_id"]
	f.mu.Lock()
	defer f.mu.Unlock()
	cb := f.callbacks[id]
	if cb == nil || cb.answered {
		return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
	}
	if UTF16Len(p["text"]) > 200 {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	cb.answered = true
	f.answers = append(f.answers, CallbackAnswer{
		CallbackQueryID: id, Text: p["text"], ShowAlert: boolParam(p, "show_alert"), URL: p["url"], Time: f.now(),
	})
	f.signalLocked()
	return true, nil
}

func commandScopeKey(p map[string]string) (string, *APIError) {
	key := "default"
	if raw := p["scope"]; raw != "" {
		var s struct {
			Type   string          `json:"type"`
			ChatID json.RawMessage `json:"chat_id"`
		}
		if err := json.Unmarshal([]byte(raw), &s); err != nil || s.Type == "" {
			return "", badRequest("can't parse BotCommandScope JSON object")
		}
		key = s.Type
		if len(s.ChatID) > 0 {
			key += ":" + strings.Trim(string(s.ChatID), `"`)
		}
	}
	return key + "|" + p["language_code"], nil
}

func (f *FakeTelegram) setMyCommands(p map[string]string) (any, *APIError) {
	raw, ok := p["commands"]
	if !ok {
		return nil, badRequest("parameter \"commands\" is required")
	}
	var cmds []BotCommand
	if err := json.Unmarshal([]byte(raw), &cmds); err != nil {
		return nil, badRequest("can't parse commands JSON object")
	}
	if len(cmds) > 100 {
		return nil, badRequest("too many commands specified")
	}
	for _, c := range cmds {
		if !validCommand(c.Command) {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
		if d := UTF16Len(strings.TrimSpace(c.Description)); d < 1 || d > 256 {
			return nil, badRequest("command description must be non-empty")
		}
	}
	key, aerr := commandScopeKey(p)
	if aerr != nil {
		return nil, aerr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commands[key] = cmds
	f.signalLocked()
	return true, nil
}

func validCommand(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
			return false
		}
	}
	return true
}

func (f *FakeTelegram) getMyCommands(p map[string]string) (any, *APIError) {
	key, aerr := commandScopeKey(p)
	if aerr != nil {
		return nil, aerr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cmds := f.commands[key]
	if cmds == nil {
		cmds = []BotCommand{}
	}
	return cmds, nil
}

func (f *FakeTelegram) deleteMyCommands(p map[string]string) (any, *APIError) {
	key, aerr := commandScopeKey(p)
	if aerr != nil {
		return nil, aerr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.commands, key)
	f.signalLocked()
	return true, nil
}
