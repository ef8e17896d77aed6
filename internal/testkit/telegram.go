package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultBotToken is the token NewFakeTelegram uses when given "".
const DefaultBotToken = "123456789:TEST-fake-bot-token"

// DefaultWait is how long the Must* waiting helpers wait before failing.
// They return as soon as the awaited change happens, so this only bounds
// a stuck test; it is long because a 2-core machine at load 13 took 20-50 s
// for what takes 1 s idle (issue 22).
const DefaultWait = 90 * time.Second

// User is a Telegram user as it appears in updates and in getMe.
type User struct {
	ID           int64  `json:"id"`
	IsBot        bool   `json:"is_bot"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name,omitempty"`
	Username     string `json:"username,omitempty"`
	LanguageCode string `json:"language_code,omitempty"`
}

// BotCommand is one entry of the bot's command menu.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// APIError is a Bot API failure answer. Code is both the HTTP status and
// the error_code field.
type APIError struct {
	Code        int
	Description string
	RetryAfter  int   // seconds, for 429
	MigrateTo   int64 // migrate_to_chat_id, for 400
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Description) }

func badRequest(format string, args ...any) *APIError {
	return &APIError{Code: 400, Description: "Bad Request: " + fmt.Sprintf(format, args...)}
}

// MethodHandler answers a Bot API method the fake does not implement
// itself. params holds the request's parameters as strings (JSON values
// that are not strings keep their JSON text).
type MethodHandler func(params map[string]string) (result any, err *APIError)

// Call is one request the fake received.
type Call struct {
	Method      string            // as written in the URL
	Params      map[string]string // parameters as strings; objects keep their JSON text
	Encoding    string            // "json", "multipart", "urlencoded" or "query"
	Time        time.Time
	Status      int    // HTTP status of the answer (0 when the connection was dropped)
	Description string // error description when the answer was not ok
}

// SentMessage is a message the bot sent, with every later edit.
type SentMessage struct {
	MessageID   int
	ChatID      int64
	ThreadID    int    // message_thread_id, 0 when none
	ReplyTo     int    // message id replied to, 0 when none
	Text        string // text as the bot sent it (before entity parsing)
	ParseMode   string
	PlainText   string // text as the user sees it (after entity parsing)
	Entities    []Entity
	ReplyMarkup json.RawMessage // compact JSON, nil when none
	Time        time.Time       // when the fake accepted it (its clock)
	Edits       []Edit
	Deleted     bool
}

// LastText returns the visible text after the last edit.
func (m SentMessage) LastText() string {
	for i := len(m.Edits) - 1; i >= 0; i-- {
		if m.Edits[i].Method == "editMessageText" {
			return m.Edits[i].PlainText
		}
	}
	return m.PlainText
}

// LastReplyMarkup returns the reply markup after the last edit.
func (m SentMessage) LastReplyMarkup() json.RawMessage {
	if len(m.Edits) > 0 {
		return m.Edits[len(m.Edits)-1].ReplyMarkup
	}
	return m.ReplyMarkup
}

// Buttons returns the texts of the inline keyboard buttons of the message
// after its last edit, row by row.
func (m SentMessage) Buttons() []string {
	var out []string
	for _, b := range inlineButtons(m.LastReplyMarkup()) {
		out = append(out, b.Text)
	}
	return out
}

// Edit is one successful editMessageText or editMessageReplyMarkup.
type Edit struct {
	Method      string // "editMessageText" or "editMessageReplyMarkup"
	ChatID      int64
	MessageID   int
	Text        string // as sent (editMessageText only)
	ParseMode   string
	PlainText   string // visible text after the edit
	Entities    []Entity
	ReplyMarkup json.RawMessage
	Time        time.Time
}

// ChatAction is one successful sendChatAction.
type ChatAction struct {
	ChatID   int64
	ThreadID int
	Action   string
	Time     time.Time
}

// CallbackAnswer is one successful answerCallbackQuery.
type CallbackAnswer struct {
	CallbackQueryID string
	Text            string
	ShowAlert       bool
	URL             string
	Time            time.Time
}

// WebhookState is what setWebhook recorded.
type WebhookState struct {
	URL                string
	SecretToken        string
	AllowedUpdates     []string
	MaxConnections     int
	IPAddress          string
	DropPendingUpdates bool
	LastErrorDate      time.Time
	LastErrorMessage   string
	Delivered          int // updates the webhook accepted
}

type queuedUpdate struct {
	id   int64
	kind string // message, edited_message, callback_query, ... ("" when unknown)
	raw  json.RawMessage
}

type storedMessage struct {
	id        int
	fromBot   bool
	from      *User
	threadID  int
	date      int64
	text      string
	entities  []Entity
	markup    json.RawMessage
	sent      *SentMessage // nil for pushed messages
	deleted   bool
	replyToID int
}

type chatState struct {
	id        int64
	typ       string
	title     string
	username  string
	firstName string
	isForum   bool
	known     bool // seen in a pushed update
	threads   map[int]bool
	nextID    int
	messages  map[int]*storedMessage
}

type injection struct {
	method    string // lower case, "*" for any
	remaining int
	err       *APIError
	drop      bool
}

type callbackState struct {
	answered bool
}

// FakeTelegram is an in-process Telegram Bot API server for tests. It serves
// {URL}/bot<token>/<method> with JSON, multipart and urlencoded bodies, keeps
// an update queue with real getUpdates semantics (long polling, offset
// confirmation, limit, 409 conflicts), validates outgoing text and markup as
// Telegram does, and records every call. It is safe for concurrent use.
type FakeTelegram struct {
	tb    testing.TB
	srv   *httptest.Server
	token string

	mu         sync.Mutex
	changed    chan struct{}
	closing    chan struct{}
	closed     bool
	now        func() time.Time
	bot        User
	nextUpdate int64
	queue      []queuedUpdate
	pushedMsg  map[int64][2]int64 // update id → chat id, message id
	chats      map[int64]*chatState
	sent       []*SentMessage
	edits      []Edit
	actions    []ChatAction
	answers    []CallbackAnswer
	calls      []Call
	injections []*injection
	commands   map[string][]BotCommand
	webhook    WebhookState
	hookStop   chan struct{}
	hookDone   chan struct{}
	hookClient *http.Client
	callbacks  map[string]*callbackState
	blocked    map[int64]bool
	handlers   map[string]MethodHandler
	pollGen    int64
	rateLimit  time.Duration
	rateRetry  int
	lastSend   map[int64]time.Time
	files      *fileStore // getFile and downloads (telegram_files.go)
}

// NewFakeTelegram starts a fake Bot API server for token (DefaultBotToken
// when empty) and stops it when the test ends.
func NewFakeTelegram(tb testing.TB, token string) *FakeTelegram {
	tb.Helper()
	if token == "" {
		token = DefaultBotToken
	}
	botID, err := strconv.ParseInt(strings.SplitN(token, ":", 2)[0], 10, 64)
	if err != nil || botID <= 0 {
		botID = 4242
	}
	f := &FakeTelegram{
		tb:         tb,
		token:      token,
		changed:    make(chan struct{}),
		closing:    make(chan struct{}),
		now:        time.Now,
		bot:        User{ID: botID, IsBot: true, FirstName: "Kairos Test", Username: "kairos_test_bot"},
		nextUpdate: 100000,
		pushedMsg:  map[int64][2]int64{},
		chats:      map[int64]*chatState{},
		commands:   map[string][]BotCommand{},
		callbacks:  map[string]*callbackState{},
		blocked:    map[int64]bool{},
		handlers:   map[string]MethodHandler{},
		hookClient: &http.Client{Timeout: 10 * time.Second},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	tb.Cleanup(f.Close)
	return f
}

// Close stops the server; pending long polls return at once. It is called
// automatically when the test ends.
func (f *FakeTelegram) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	close(f.closing)
	f.mu.Unlock()
	f.stopWebhook()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// URL is the server's base URL, the value for bot.WithServerURL or
// TELEGRAM_API_URL.
func (f *FakeTelegram) URL() string { return f.srv.URL }

// Token is the bot token the fake accepts.
func (f *FakeTelegram) Token() string { return f.token }

// Bot returns the bot's own user (what getMe answers).
func (f *FakeTelegram) Bot() User {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bot
}

// BotUsername is the bot's @username without the '@'.
func (f *FakeTelegram) BotUsername() string { return f.Bot().Username }

// SetBotUser changes the name and username getMe reports.
func (f *FakeTelegram) SetBotUser(firstName, username string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bot.FirstName = firstName
	f.bot.Username = username
}

// SetNow replaces the clock used for the dates of sent messages and the
// timestamps of records (time.Now by default).
func (f *FakeTelegram) SetNow(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = now
}

// SetWebhookHTTPClient sets the client used to deliver updates to a
// webhook (for example an httptest TLS server's Client()).
func (f *FakeTelegram) SetWebhookHTTPClient(c *http.Client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hookClient = c
}

// BlockChat makes every later send to chatID fail with 403 as when the
// user blocked the bot (or the bot was removed from the group).
func (f *FakeTelegram) BlockChat(chatID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocked[chatID] = true
}

// SetChatRateLimit makes the fake enforce a minimum interval between
// messages sent to the same chat, as Telegram roughly does (about one per
// second per chat): a sendMessage that comes sooner is answered with 429
// and retry_after retryAfter. Zero turns the limit off (the default).
func (f *FakeTelegram) SetChatRateLimit(minInterval time.Duration, retryAfter int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rateLimit, f.rateRetry = minInterval, retryAfter
	f.lastSend = map[int64]time.Time{}
}

// Handle installs a handler for a method the fake does not implement (or
// overrides one it does). Method names are case-insensitive.
func (f *FakeTelegram) Handle(method string, h MethodHandler) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[strings.ToLower(method)] = h
}

// InjectTooManyRequests answers the next n calls of method ("*" for any)
// with 429 "Too Many Requests: retry after X".
func (f *FakeTelegram) InjectTooManyRequests(method string, n int, retryAfter int) {
	f.inject(method, n, &APIError{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter}, false)
}

// InjectError answers the next n calls of method ("*" for any) with the
// given error code and description (e.g. 500 "Internal Server Error",
// 502 "Bad Gateway").
func (f *FakeTelegram) InjectError(method string, n int, code int, description string) {
	if description == "" {
		description = http.StatusText(code)
	}
	f.inject(method, n, &APIError{Code: code, Description: description}, false)
}

// InjectNetworkError drops the connection without an answer on the next n
// calls of method ("*" for any).
func (f *FakeTelegram) InjectNetworkError(method string, n int) {
	f.inject(method, n, nil, true)
}

func (f *FakeTelegram) inject(method string, n int, err *APIError, drop bool) {
	if n <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injections = append(f.injections, &injection{method: strings.ToLower(method), remaining: n, err: err, drop: drop})
}

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

// PushText queues a text message from userID in chatID sent at date (the
// fake's clock when zero) and returns its update_id. By default the chat is
// private when chatID > 0; options make it a group, a forum topic, a reply,
// an edit, or set the sender and entities. Bot commands, @mentions and
// #hashtags get entities as Telegram adds them.
func (f *FakeTelegram) PushText(chatID, userID int64, text string, date time.Time, opts ...PushOption) int64 {
	cfg := &pushConfig{}
	for _, o := range opts {
		o(cfg)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if date.IsZero() {
		date = f.now()
	}
	user := f.userFor(userID, cfg)
	c := f.applyChatLocked(chatID, user, cfg)
	c.nextID++
	m := &storedMessage{id: c.nextID, from: user, threadID: cfg.threadID, date: date.Unix(), text: text}
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
			c.messages[cfg.replyTo] = &storedMessage{id: cfg.replyTo, fromBot: true, from: &f.bot, date: date.Unix()}
		}
		m.replyToID = cfg.replyTo
	}
	c.messages[m.id] = m
	payload := f.messageJSONLocked(c, m, true)
	kind := "message"
	if cfg.edited {
		kind = "edited_message"
		payload.EditDate = date.Unix()
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
	cfg := &pushConfig{}
	for _, o := range opts {
		o(cfg)
	}
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
	cfg := &pushConfig{}
	for _, o := range opts {
		o(cfg)
	}
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

// --- records -----------------------------------------------------------------

func (f *FakeTelegram) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func copySent(s *SentMessage) SentMessage {
	c := *s
	c.Entities = append([]Entity(nil), s.Entities...)
	c.Edits = append([]Edit(nil), s.Edits...)
	return c
}

// Sent returns every message the bot sent, in order, with their edits.
func (f *FakeTelegram) Sent() []SentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]SentMessage, 0, len(f.sent))
	for _, s := range f.sent {
		out = append(out, copySent(s))
	}
	return out
}

// SentTo returns the messages the bot sent to chatID, in order.
func (f *FakeTelegram) SentTo(chatID int64) []SentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []SentMessage
	for _, s := range f.sent {
		if s.ChatID == chatID {
			out = append(out, copySent(s))
		}
	}
	return out
}

// Edits returns the successful edits of messages in chatID, in order.
func (f *FakeTelegram) Edits(chatID int64) []Edit {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Edit
	for _, e := range f.edits {
		if e.ChatID == chatID {
			out = append(out, e)
		}
	}
	return out
}

// ChatActions returns the chat actions sent to chatID, in order.
func (f *FakeTelegram) ChatActions(chatID int64) []ChatAction {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ChatAction
	for _, a := range f.actions {
		if a.ChatID == chatID {
			out = append(out, a)
		}
	}
	return out
}

// CallbackAnswers returns the answered callback queries, in order.
func (f *FakeTelegram) CallbackAnswers() []CallbackAnswer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]CallbackAnswer(nil), f.answers...)
}

// Calls returns the calls of method (case-insensitive; "" for all), in order.
func (f *FakeTelegram) Calls(method string) []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.callsLocked(method)
}

func (f *FakeTelegram) callsLocked(method string) []Call {
	var out []Call
	for _, c := range f.calls {
		if method == "" || strings.EqualFold(c.Method, method) {
			out = append(out, c)
		}
	}
	return out
}

// Commands returns the command menu set for the default scope and no
// language.
func (f *FakeTelegram) Commands() []BotCommand { return f.CommandsFor("default", "") }

// CommandsFor returns the command menu for a scope type ("default",
// "all_private_chats", ...; "chat:<id>" for a chat scope) and language.
func (f *FakeTelegram) CommandsFor(scope, languageCode string) []BotCommand {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]BotCommand(nil), f.commands[scope+"|"+languageCode]...)
}

// Webhook returns the webhook state (URL empty when none is set).
func (f *FakeTelegram) Webhook() WebhookState {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.webhook
	w.AllowedUpdates = append([]string(nil), w.AllowedUpdates...)
	return w
}

// waitFor blocks until cond (called with the lock held) is true.
func (f *FakeTelegram) waitFor(ctx context.Context, what string, cond func() bool) error {
	for {
		f.mu.Lock()
		if cond() {
			f.mu.Unlock()
			return nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("testkit: waiting for %s: %w", what, ctx.Err())
		}
	}
}

// WaitUntil blocks until cond, which may call the fake's accessors, holds
// after some change the bot made (a message, an edit, a call), or ctx
// ends. Tests wait on this event rather than polling on a fixed deadline.
func (f *FakeTelegram) WaitUntil(ctx context.Context, cond func() bool) error {
	for {
		f.mu.Lock()
		ch := f.changed // taken before cond runs: no change is missed
		f.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitSent blocks until the bot has sent at least n messages (in all chats)
// and returns them all.
func (f *FakeTelegram) WaitSent(ctx context.Context, n int) ([]SentMessage, error) {
	err := f.waitFor(ctx, fmt.Sprintf("%d sent messages", n), func() bool { return len(f.sent) >= n })
	return f.Sent(), err
}

// WaitSentTo blocks until the bot has sent at least n messages to chatID
// and returns the messages sent to it.
func (f *FakeTelegram) WaitSentTo(ctx context.Context, chatID int64, n int) ([]SentMessage, error) {
	err := f.waitFor(ctx, fmt.Sprintf("%d messages to chat %d", n, chatID), func() bool {
		k := 0
		for _, s := range f.sent {
			if s.ChatID == chatID {
				k++
			}
		}
		return k >= n
	})
	return f.SentTo(chatID), err
}

// WaitCalls blocks until method was called at least n times (successful or
// not) and returns those calls.
func (f *FakeTelegram) WaitCalls(ctx context.Context, method string, n int) ([]Call, error) {
	err := f.waitFor(ctx, fmt.Sprintf("%d %s calls", n, method), func() bool { return len(f.callsLocked(method)) >= n })
	return f.Calls(method), err
}

// WaitEdits blocks until at least n edits were made in chatID.
func (f *FakeTelegram) WaitEdits(ctx context.Context, chatID int64, n int) ([]Edit, error) {
	err := f.waitFor(ctx, fmt.Sprintf("%d edits in chat %d", n, chatID), func() bool {
		k := 0
		for _, e := range f.edits {
			if e.ChatID == chatID {
				k++
			}
		}
		return k >= n
	})
	return f.Edits(chatID), err
}

// WaitConsumed blocks until no update is pending (the bot confirmed them
// all with a later getUpdates offset, or the webhook accepted them).
func (f *FakeTelegram) WaitConsumed(ctx context.Context) error {
	return f.waitFor(ctx, "all updates to be confirmed", func() bool { return len(f.queue) == 0 })
}

// MustWaitSent is WaitSent with DefaultWait that fails the test on timeout.
func (f *FakeTelegram) MustWaitSent(n int) []SentMessage {
	f.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultWait)
	defer cancel()
	out, err := f.WaitSent(ctx, n)
	if err != nil {
		f.tb.Fatalf("%v (got %d: %s)", err, len(out), sentSummary(out))
	}
	return out
}

// MustWaitSentTo is WaitSentTo with DefaultWait that fails the test on timeout.
func (f *FakeTelegram) MustWaitSentTo(chatID int64, n int) []SentMessage {
	f.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultWait)
	defer cancel()
	out, err := f.WaitSentTo(ctx, chatID, n)
	if err != nil {
		f.tb.Fatalf("%v (got %d: %s)", err, len(out), sentSummary(out))
	}
	return out
}

func sentSummary(ms []SentMessage) string {
	var parts []string
	for _, m := range ms {
		t := m.LastText()
		if len(t) > 60 {
			t = t[:60] + "…"
		}
		parts = append(parts, fmt.Sprintf("%d:%q", m.ChatID, t))
	}
	return strings.Join(parts, ", ")
}

// --- HTTP ----------------------------------------------------------------------

type apiResponse struct {
	OK          bool            `json:"ok"`
	Result      any             `json:"result,omitempty"`
	ErrorCode   int             `json:"error_code,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  *responseParams `json:"parameters,omitempty"`
}

type responseParams struct {
	RetryAfter      int   `json:"retry_after,omitempty"`
	MigrateToChatID int64 `json:"migrate_to_chat_id,omitempty"`
}

type okWithDescription struct {
	result      any
	description string
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeAPIError(w http.ResponseWriter, e *APIError) {
	resp := apiResponse{OK: false, ErrorCode: e.Code, Description: e.Description}
	if e.RetryAfter > 0 || e.MigrateTo != 0 {
		resp.Parameters = &responseParams{RetryAfter: e.RetryAfter, MigrateToChatID: e.MigrateTo}
	}
	writeJSON(w, e.Code, resp)
}

func (f *FakeTelegram) record(c Call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
	f.signalLocked()
}

func (f *FakeTelegram) serveHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	now := f.now()
	f.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/file/bot") {
		f.serveFile(w, r)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	method = strings.TrimPrefix(method, "test/")
	if !ok || !ok2 || method == "" || strings.Contains(method, "/") {
		writeAPIError(w, &APIError{Code: 404, Description: "Not Found"})
		return
	}
	call := Call{Method: method, Time: now}
	if token != f.token {
		call.Status, call.Description = 401, "Unauthorized"
		f.record(call)
		writeAPIError(w, &APIError{Code: 401, Description: "Unauthorized"})
		return
	}
	params, enc, perr := readParams(r)
	call.Params, call.Encoding = params, enc
	if perr != nil {
		call.Status, call.Description = perr.Code, perr.Description
		f.record(call)
		writeAPIError(w, perr)
		return
	}
	if inj := f.takeInjection(method); inj != nil {
		if inj.drop {
			f.record(call)
			dropConnection(w)
			return
		}
		call.Status, call.Description = inj.err.Code, inj.err.Description
		f.record(call)
		writeAPIError(w, inj.err)
		return
	}
	result, aerr := f.dispatch(r.Context(), method, params)
	if aerr != nil {
		if aerr.Code == 0 { // the client went away during a long poll
			return
		}
		call.Status, call.Description = aerr.Code, aerr.Description
		f.record(call)
		writeAPIError(w, aerr)
		return
	}
	call.Status = 200
	f.record(call)
	resp := apiResponse{OK: true, Result: result}
	if d, ok := result.(okWithDescription); ok {
		resp.Result, resp.Description = d.result, d.description
	}
	writeJSON(w, 200, resp)
}

func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func (f *FakeTelegram) takeInjection(method string) *injection {
	f.mu.Lock()
	defer f.mu.Unlock()
	lm := strings.ToLower(method)
	for i, inj := range f.injections {
		if inj.method == "*" || inj.method == lm {
			inj.remaining--
			if inj.remaining <= 0 {
				f.injections = append(f.injections[:i], f.injections[i+1:]...)
			}
			return inj
		}
	}
	return nil
}

// readParams collects the request's parameters from the query string and
// a JSON, multipart or urlencoded body.
func readParams(r *http.Request) (map[string]string, string, *APIError) {
	p := map[string]string{}
	enc := "query"
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return p, enc, badRequest("can't read request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return p, enc, nil
	}
	ct, ctParams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		enc = "json"
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return p, enc, badRequest("can't parse JSON object")
		}
		for k, raw := range m {
			raw = bytes.TrimSpace(raw)
			switch {
			case bytes.Equal(raw, []byte("null")):
			case len(raw) > 0 && raw[0] == '"':
				var s string
				_ = json.Unmarshal(raw, &s)
				p[k] = s
			default:
				p[k] = string(raw)
			}
		}
	case "multipart/form-data":
		enc = "multipart"
		mr := multipart.NewReader(bytes.NewReader(body), ctParams["boundary"])
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return p, enc, badRequest("can't parse multipart/form-data body")
			}
			v, err := io.ReadAll(part)
			if err != nil {
				return p, enc, badRequest("can't parse multipart/form-data body")
			}
			if part.FileName() != "" {
				p[part.FormName()] = "<file:" + part.FileName() + ">"
				p[part.FormName()+"#bytes"] = string(v)
				continue
			}
			p[part.FormName()] = string(v)
		}
	case "application/x-www-form-urlencoded", "":
		enc = "urlencoded"
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return p, enc, badRequest("can't parse urlencoded body")
		}
		for k, v := range vals {
			if len(v) > 0 {
				p[k] = v[0]
			}
		}
	default:
		return p, enc, badRequest("unsupported Content-Type %q", ct)
	}
	return p, enc, nil
}

func (f *FakeTelegram) dispatch(ctx context.Context, method string, p map[string]string) (any, *APIError) {
	lm := strings.ToLower(method)
	f.mu.Lock()
	h := f.handlers[lm]
	f.mu.Unlock()
	if h != nil {
		return h(p)
	}
	switch lm {
	case "getme":
		return f.getMe(), nil
	case "getupdates":
		return f.getUpdates(ctx, p)
	case "sendmessage":
		return f.sendMessage(p)
	case "editmessagetext":
		return f.editMessage(p, "editMessageText")
	case "editmessagereplymarkup":
		return f.editMessage(p, "editMessageReplyMarkup")
	case "deletemessage":
		return f.deleteMessage(p)
	case "sendchataction":
		return f.sendChatAction(p)
	case "answercallbackquery":
		return f.answerCallbackQuery(p)
	case "setmycommands":
		return f.setMyCommands(p)
	case "getmycommands":
		return f.getMyCommands(p)
	case "deletemycommands":
		return f.deleteMyCommands(p)
	case "setwebhook":
		return f.setWebhook(p)
	case "deletewebhook":
		return f.deleteWebhook(p)
	case "getwebhookinfo":
		return f.getWebhookInfo(), nil
	case "getfile":
		return f.getFile(p)
	case "sendvoice":
		return f.sendVoice(p)
	case "sendphoto":
		return f.sendPhoto(p)
	}
	return nil, &APIError{Code: 404, Description: "Not Found"}
}

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

// --- getUpdates --------------------------------------------------------------

func (f *FakeTelegram) confirmLocked(offset int64) {
	if offset == 0 {
		return
	}
	before := len(f.queue)
	if offset > 0 {
		i := 0
		for i < len(f.queue) && f.queue[i].id < offset {
			i++
		}
		f.queue = f.queue[i:]
	} else if keep := int(-offset); keep < len(f.queue) {
		f.queue = f.queue[len(f.queue)-keep:]
	}
	if len(f.queue) != before {
		f.signalLocked()
	}
}

func (f *FakeTelegram) getUpdates(ctx context.Context, p map[string]string) (any, *APIError) {
	offset, _, aerr := intParam(p, "offset")
	if aerr != nil {
		return nil, aerr
	}
	limit, hasLimit, aerr := intParam(p, "limit")
	if aerr != nil {
		return nil, aerr
	}
	if !hasLimit || limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _, aerr := intParam(p, "timeout")
	if aerr != nil {
		return nil, aerr
	}
	var allowed map[string]bool
	if raw := p["allowed_updates"]; raw != "" {
		var list []string
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			return nil, badRequest("can't parse allowed updates JSON array")
		}
		if len(list) > 0 {
			allowed = map[string]bool{}
			for _, k := range list {
				allowed[k] = true
			}
		}
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Duration(timeout) * time.Second)
		defer t.Stop()
		timer = t.C
	}

	f.mu.Lock()
	if f.webhook.URL != "" {
		f.mu.Unlock()
		return nil, &APIError{Code: 409, Description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	f.pollGen++
	gen := f.pollGen
	f.signalLocked() // wakes an older poll so that it notices it was superseded
	f.confirmLocked(offset)
	for {
		if f.pollGen != gen {
			f.mu.Unlock()
			return nil, &APIError{Code: 409, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
		}
		out := make([]json.RawMessage, 0)
		for _, u := range f.queue {
			if len(out) >= int(limit) {
				break
			}
			if allowed != nil && u.kind != "" && !allowed[u.kind] {
				continue
			}
			out = append(out, u.raw)
		}
		if len(out) > 0 || timer == nil || f.closed {
			f.mu.Unlock()
			return out, nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-timer:
			return []json.RawMessage{}, nil
		case <-f.closing:
			return []json.RawMessage{}, nil
		case <-ctx.Done():
			return nil, &APIError{} // client gone; nothing is written
		}
		f.mu.Lock()
	}
}

// --- webhooks ------------------------------------------------------------------

func validSecretToken(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIIAlnum(c) || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (f *FakeTelegram) setWebhook(p map[string]string) (any, *APIError) {
	raw := strings.TrimSpace(p["url"])
	if raw == "" {
		return f.deleteWebhook(p)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, badRequest("bad webhook: Failed to resolve host: Name or service not known")
	}
	loop := isLoopbackHost(u.Hostname())
	switch {
	case u.Scheme == "https":
		if port := u.Port(); !loop && port != "" && port != "443" && port != "80" && port != "88" && port != "8443" {
			return nil, badRequest("bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443")
		}
	case u.Scheme == "http" && loop:
		// The fake accepts plain HTTP on loopback so tests can use httptest.
	default:
		return nil, badRequest("bad webhook: An HTTPS URL must be provided for webhook")
	}
	secret, hasSecret := p["secret_token"]
	if hasSecret && secret != "" && !validSecretToken(secret) {
		return nil, badRequest("secret token contains unallowed characters")
	}
	var allowed []string
	if a := p["allowed_updates"]; a != "" {
		if err := json.Unmarshal([]byte(a), &allowed); err != nil {
			return nil, badRequest("can't parse allowed updates JSON array")
		}
	}
	maxConn, _, aerr := intParam(p, "max_connections")
	if aerr != nil {
		return nil, aerr
	}
	if maxConn == 0 {
		maxConn = 40
	}
	f.stopWebhook()
	f.mu.Lock()
	defer f.mu.Unlock()
	drop := boolParam(p, "drop_pending_updates")
	if drop {
		f.queue = nil
	}
	f.webhook = WebhookState{
		URL: raw, SecretToken: secret, AllowedUpdates: allowed, MaxConnections: int(maxConn),
		IPAddress: p["ip_address"], DropPendingUpdates: drop,
	}
	f.pollGen++ // a pending long poll ends with 409
	f.hookStop = make(chan struct{})
	f.hookDone = make(chan struct{})
	go f.deliverWebhook(f.hookStop, f.hookDone)
	f.signalLocked()
	return okWithDescription{result: true, description: "Webhook was set"}, nil
}

func (f *FakeTelegram) deleteWebhook(p map[string]string) (any, *APIError) {
	f.stopWebhook()
	f.mu.Lock()
	defer f.mu.Unlock()
	if boolParam(p, "drop_pending_updates") {
		f.queue = nil
	}
	was := f.webhook.URL != ""
	f.webhook = WebhookState{}
	f.signalLocked()
	if !was {
		return okWithDescription{result: true, description: "Webhook is already deleted"}, nil
	}
	return okWithDescription{result: true, description: "Webhook was deleted"}, nil
}

func (f *FakeTelegram) stopWebhook() {
	f.mu.Lock()
	stop, done := f.hookStop, f.hookDone
	f.hookStop, f.hookDone = nil, nil
	f.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (f *FakeTelegram) getWebhookInfo() any {
	f.mu.Lock()
	defer f.mu.Unlock()
	info := map[string]any{
		"url":                    f.webhook.URL,
		"has_custom_certificate": false,
		"pending_update_count":   len(f.queue),
	}
	if f.webhook.URL != "" {
		info["max_connections"] = f.webhook.MaxConnections
		if f.webhook.IPAddress != "" {
			info["ip_address"] = f.webhook.IPAddress
		}
		if len(f.webhook.AllowedUpdates) > 0 {
			info["allowed_updates"] = f.webhook.AllowedUpdates
		}
		if !f.webhook.LastErrorDate.IsZero() {
			info["last_error_date"] = f.webhook.LastErrorDate.Unix()
			info["last_error_message"] = f.webhook.LastErrorMessage
		}
	}
	return info
}

// deliverWebhook posts queued updates one at a time to the webhook URL
// with the secret header; an update leaves the queue when the webhook
// answers 2xx. Failures back off from 50ms to 2s.
func (f *FakeTelegram) deliverWebhook(stop, done chan struct{}) {
	defer close(done)
	backoff := time.Duration(0)
	for {
		f.mu.Lock()
		hook := f.webhook
		client := f.hookClient
		var next *queuedUpdate
		allowed := map[string]bool{}
		for _, a := range hook.AllowedUpdates {
			allowed[a] = true
		}
		for i := range f.queue {
			u := f.queue[i]
			if len(allowed) > 0 && u.kind != "" && !allowed[u.kind] {
				continue
			}
			next = &u
			break
		}
		ch := f.changed
		f.mu.Unlock()
		if next == nil {
			select {
			case <-stop:
				return
			case <-ch:
				continue
			}
		}
		if backoff > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		errMsg := f.postUpdate(stop, client, hook, next.raw)
		f.mu.Lock()
		if errMsg == "" {
			for i := range f.queue {
				if f.queue[i].id == next.id {
					f.queue = append(f.queue[:i], f.queue[i+1:]...)
					break
				}
			}
			f.webhook.Delivered++
			backoff = 0
		} else {
			f.webhook.LastErrorDate = f.now()
			f.webhook.LastErrorMessage = errMsg
			switch {
			case backoff == 0:
				backoff = 50 * time.Millisecond
			case backoff < 2*time.Second:
				backoff *= 2
			}
		}
		f.signalLocked()
		f.mu.Unlock()
	}
}

func (f *FakeTelegram) postUpdate(stop chan struct{}, client *http.Client, hook WebhookState, raw json.RawMessage) string {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(raw))
	if err != nil {
		return "Invalid webhook URL"
	}
	req.Header.Set("Content-Type", "application/json")
	if hook.SecretToken != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", hook.SecretToken)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "Connection refused"
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Sprintf("Wrong response from the webhook: %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return ""
}
