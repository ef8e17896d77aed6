package testkit

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// --- pushing updates -------------------------------------------------------

// PushOption adjusts an update pushed with PushText or PushCallback.
type PushOption func(*pushConfig)

type pushConfig struct {
	chatType    string
	title       string
	threadID    int
	replyTo     int
	replyToBot  bool
	entities    []Entity
	setEntities bool
	firstName   string
	lastName    string
	username    string
	language    string
	edited      bool
	forwarded   string // forward_origin's sender name ("" = not forwarded)
	autoForward bool
}

// AsGroup pushes into a supergroup with the given title.
func AsGroup(title string) PushOption {
	return func(c *pushConfig) { c.chatType = "supergroup"; c.title = title }
}

// WithChatType sets the chat type: "private", "group", "supergroup" or "channel".
func WithChatType(t string) PushOption { return func(c *pushConfig) { c.chatType = t } }

// InTopic pushes into forum topic threadID of a supergroup (forum) chat.
func InTopic(threadID int) PushOption {
	return func(c *pushConfig) {
		c.threadID = threadID
		if c.chatType == "" || c.chatType == "private" {
			c.chatType = "supergroup"
		}
	}
}

// ReplyTo makes the pushed message a reply to message messageID of the chat.
func ReplyTo(messageID int) PushOption { return func(c *pushConfig) { c.replyTo = messageID } }

// ReplyToBot makes the pushed message a reply to the bot's message
// messageID (the bot's last message in the chat when 0).
func ReplyToBot(messageID int) PushOption {
	return func(c *pushConfig) { c.replyTo = messageID; c.replyToBot = true }
}

// WithEntities sets the message entities instead of the ones Telegram
// would detect (bot commands, mentions, hashtags).
func WithEntities(ents ...Entity) PushOption {
	return func(c *pushConfig) { c.entities = ents; c.setEntities = true }
}

// From sets the sender's first name and username.
func From(firstName, username string) PushOption {
	return func(c *pushConfig) { c.firstName = firstName; c.username = username }
}

// FromLastName sets the sender's last name.
func FromLastName(lastName string) PushOption { return func(c *pushConfig) { c.lastName = lastName } }

// WithLanguage sets the sender's language_code ("en" by default).
func WithLanguage(code string) PushOption { return func(c *pushConfig) { c.language = code } }

// Forwarded pushes the message as one the sender forwarded from
// originalSender (forward_origin of type "hidden_user", as Telegram sends
// it for a user who hides their account).
func Forwarded(originalSender string) PushOption {
	return func(c *pushConfig) { c.forwarded = originalSender }
}

// AutomaticForward pushes a channel post forwarded into its discussion
// group (is_automatic_forward, with a channel forward_origin).
func AutomaticForward() PushOption { return func(c *pushConfig) { c.autoForward = true } }

// Edited pushes an edited_message instead of a message.
func Edited() PushOption { return func(c *pushConfig) { c.edited = true } }

type tgChat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	IsForum   bool   `json:"is_forum,omitempty"`
}

type tgMessage struct {
	MessageID       int             `json:"message_id"`
	MessageThreadID int             `json:"message_thread_id,omitempty"`
	From            *User           `json:"from,omitempty"`
	Chat            tgChat          `json:"chat"`
	Date            int64           `json:"date"`
	EditDate        int64           `json:"edit_date,omitempty"`
	IsTopicMessage  bool            `json:"is_topic_message,omitempty"`
	ReplyToMessage  *tgMessage      `json:"reply_to_message,omitempty"`
	Text            string          `json:"text,omitempty"`
	Entities        []Entity        `json:"entities,omitempty"`
	ReplyMarkup     json.RawMessage `json:"reply_markup,omitempty"`
	ForwardOrigin   json.RawMessage `json:"forward_origin,omitempty"`
	IsAutoForward   bool            `json:"is_automatic_forward,omitempty"`
}

func (c *chatState) json() tgChat {
	return tgChat{ID: c.id, Type: c.typ, Title: c.title, Username: c.username, FirstName: c.firstName, IsForum: c.isForum}
}

// chatLocked returns the state of chatID, creating it with a type guessed
// from the id as Telegram assigns them.
func (f *FakeTelegram) chatLocked(chatID int64) *chatState {
	c := f.chats[chatID]
	if c == nil {
		c = &chatState{id: chatID, threads: map[int]bool{}, messages: map[int]*storedMessage{}}
		switch {
		case chatID > 0:
			c.typ = "private"
		case chatID <= -1000000000000:
			c.typ = "supergroup"
			c.title = "Group " + itoa(-chatID)
		default:
			c.typ = "group"
			c.title = "Group " + itoa(-chatID)
		}
		f.chats[chatID] = c
	}
	return c
}

func (f *FakeTelegram) messageJSONLocked(c *chatState, m *storedMessage, withReply bool) *tgMessage {
	out := &tgMessage{
		MessageID: m.id,
		From:      m.from,
		Chat:      c.json(),
		Date:      m.date,
		Text:      m.text,
		Entities:  m.entities,
	}
	if m.threadID != 0 {
		out.MessageThreadID = m.threadID
		out.IsTopicMessage = c.isForum
	}
	if isInlineKeyboard(m.markup) {
		out.ReplyMarkup = m.markup
	}
	if withReply && m.replyToID != 0 {
		if r := c.messages[m.replyToID]; r != nil {
			out.ReplyToMessage = f.messageJSONLocked(c, r, false)
		}
	}
	return out
}

func (f *FakeTelegram) userFor(userID int64, cfg *pushConfig) *User {
	u := &User{ID: userID, FirstName: "User" + itoa(userID), Username: "user" + itoa(userID), LanguageCode: "en"}
	if cfg.firstName != "" {
		u.FirstName = cfg.firstName
	}
	if cfg.username != "" {
		u.Username = cfg.username
	}
	u.LastName = cfg.lastName
	if cfg.language != "" {
		u.LanguageCode = cfg.language
	}
	return u
}

func (f *FakeTelegram) applyChatLocked(chatID int64, user *User, cfg *pushConfig) *chatState {
	c := f.chatLocked(chatID)
	c.known = true
	if cfg.chatType != "" {
		c.typ = cfg.chatType
	}
	if cfg.title != "" {
		c.title = cfg.title
	}
	if c.typ == "private" {
		c.title = ""
		c.firstName = user.FirstName
		c.username = user.Username
	} else if c.title == "" {
		c.title = "Group " + itoa(-chatID)
	}
	if cfg.threadID != 0 {
		c.isForum = true
		c.threads[cfg.threadID] = true
	}
	return c
}

func (f *FakeTelegram) enqueueLocked(kind string, payload any) int64 {
	f.nextUpdate++
	id := f.nextUpdate
	body := map[string]any{"update_id": id, kind: payload}
	raw, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	f.queue = append(f.queue, queuedUpdate{id: id, kind: kind, raw: raw})
	f.signalLocked()
	return id
}

func pushOptions(opts []PushOption) *pushConfig {
	cfg := &pushConfig{}
	for _, o := range opts {
		o(cfg)
	}
	return cfg
}

// incomingLocked makes the next message of chatID, from userID (as cfg
// says) at date (the fake's clock when zero); the caller fills and stores
// it.
func (f *FakeTelegram) incomingLocked(chatID, userID int64, date time.Time, cfg *pushConfig) (*chatState, *storedMessage) {
	if date.IsZero() {
		date = f.now()
	}
	user := f.userFor(userID, cfg)
	c := f.applyChatLocked(chatID, user, cfg)
	c.nextID++
	return c, &storedMessage{id: c.nextID, from: user, threadID: cfg.threadID, date: date.Unix()}
}

// PushText queues a text message from userID in chatID sent at date (the
// fake's clock when zero) and returns its update_id. By default the chat is
// private when chatID > 0; options make it a group, a forum topic, a reply,
// an edit, or set the sender and entities. Bot commands, @mentions and
// #hashtags get entities as Telegram adds them.
func (f *FakeTelegram) PushText(chatID, userID int64, text string, date time.Time, opts ...PushOption) int64 {
	cfg := pushOptions(opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	c, m := f.incomingLocked(chatID, userID, date, cfg)
	m.text = text
	if cfg.setEntities {
		m.entities = cfg.entities
	} else {
		m.entities = autoEntities(text)
	}
	if cfg.replyToBot && cfg.replyTo == 0 {
		for id := c.nextID - 1; id > 0; id-- {
			if pm := c.messages[id]; pm != nil && pm.fromBot {
				cfg.replyTo = id
				break
			}
		}
	}
	if cfg.replyTo != 0 {
		if c.messages[cfg.replyTo] == nil && cfg.replyToBot {
			c.messages[cfg.replyTo] = &storedMessage{id: cfg.replyTo, fromBot: true, from: &f.bot, date: m.date}
		}
		m.replyToID = cfg.replyTo
	}
	c.messages[m.id] = m
	payload := f.messageJSONLocked(c, m, true)
	switch {
	case cfg.autoForward:
		payload.IsAutoForward = true
		payload.ForwardOrigin, _ = json.Marshal(map[string]any{"type": "channel", "date": m.date - 60,
			"chat": map[string]any{"id": -1001234, "type": "channel", "title": "A channel"}, "message_id": 1})
	case cfg.forwarded != "":
		payload.ForwardOrigin, _ = json.Marshal(map[string]any{"type": "hidden_user", "date": m.date - 60, "sender_user_name": cfg.forwarded})
	}
	kind := "message"
	if cfg.edited {
		kind = "edited_message"
		payload.EditDate = m.date
	}
	id := f.enqueueLocked(kind, payload)
	f.pushedMsg[id] = [2]int64{chatID, int64(m.id)}
	return id
}

// MessageIDOf returns the message_id of the message pushed as update
// updateID (0 when it was not a PushText update).
func (f *FakeTelegram) MessageIDOf(updateID int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int(f.pushedMsg[updateID][1])
}

// CallbackQueryID is the id of the callback query pushed as update updateID.
func CallbackQueryID(updateID int64) string { return "cbq-" + itoa(updateID) }

// PushCallback queues an inline-button press by userID on message
// messageID of chatID carrying data, and returns the update_id; the query's
// id is CallbackQueryID(update_id).
func (f *FakeTelegram) PushCallback(chatID, userID int64, messageID int, data string, opts ...PushOption) int64 {
	cfg := pushOptions(opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pushCallbackLocked(chatID, userID, messageID, data, cfg)
}

func (f *FakeTelegram) pushCallbackLocked(chatID, userID int64, messageID int, data string, cfg *pushConfig) int64 {
	user := f.userFor(userID, cfg)
	c := f.chatLocked(chatID)
	if c.typ == "private" && !c.known {
		c.firstName, c.username = user.FirstName, user.Username
	}
	m := c.messages[messageID]
	if m == nil {
		m = &storedMessage{id: messageID, fromBot: true, from: &f.bot, date: f.now().Unix()}
	}
	id := f.nextUpdate + 1
	cbID := CallbackQueryID(id)
	f.callbacks[cbID] = &callbackState{}
	payload := map[string]any{
		"id":            cbID,
		"from":          user,
		"message":       f.messageJSONLocked(c, m, false),
		"chat_instance": "ci" + itoa(chatID),
		"data":          data,
	}
	return f.enqueueLocked("callback_query", payload)
}

// PressButton finds the latest message the bot sent to chatID whose inline
// keyboard has a callback button labelled buttonText and pushes its press
// by userID. It returns the update_id.
func (f *FakeTelegram) PressButton(chatID, userID int64, buttonText string, opts ...PushOption) (int64, error) {
	cfg := pushOptions(opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.sent) - 1; i >= 0; i-- {
		s := f.sent[i]
		if s.ChatID != chatID || s.Deleted {
			continue
		}
		for _, b := range inlineButtons(s.LastReplyMarkup()) {
			if b.Text == buttonText && b.CallbackData != "" {
				return f.pushCallbackLocked(chatID, userID, s.MessageID, b.CallbackData, cfg), nil
			}
		}
	}
	return 0, fmt.Errorf("testkit: no message to chat %d has a callback button %q", chatID, buttonText)
}

// PushUpdateJSON queues a raw update (for odd or partial updates) and
// returns its update_id. A JSON object without "update_id" gets the next
// id; one with a numeric "update_id" keeps it. raw must be valid JSON.
func (f *FakeTelegram) PushUpdateJSON(raw string) int64 {
	f.tb.Helper()
	if !json.Valid([]byte(raw)) {
		f.tb.Fatalf("testkit: PushUpdateJSON: invalid JSON: %q", raw)
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var obj map[string]json.RawMessage
	kind := ""
	var id int64
	if json.Unmarshal([]byte(raw), &obj) == nil && obj != nil {
		if v, ok := obj["update_id"]; ok {
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				id = n
			}
		}
		for k := range obj {
			if k != "update_id" {
				kind = k
			}
		}
		if id == 0 {
			f.nextUpdate++
			id = f.nextUpdate
			obj["update_id"] = json.RawMessage(itoa(id))
			b, _ := json.Marshal(obj)
			raw = string(b)
		} else if id > f.nextUpdate {
			f.nextUpdate = id
		}
	} else {
		f.nextUpdate++
		id = f.nextUpdate
	}
	f.queue = append(f.queue, queuedUpdate{id: id, kind: kind, raw: json.RawMessage(raw)})
	sort.SliceStable(f.queue, func(i, j int) bool { return f.queue[i].id < f.queue[j].id })
	f.signalLocked()
	return id
}

// Pending returns how many updates are queued and not yet confirmed.
func (f *FakeTelegram) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}
