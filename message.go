package kairos

import (
	"strconv"
	"time"
)

// Channels (transport surfaces, CLOCK.md §2).
const (
	ChannelTelegram = "telegram"
	ChannelCLI      = "cli"
)

// Chat kinds.
const (
	ChatDM    = "dm"
	ChatGroup = "group"
)

// Inbound is one user message as it arrives from a channel, before the
// interaction wrapper stamps it. Date is the message's own timestamp
// (Telegram's `date`), the wrapper's received_at; it is never replaced by the
// host clock.
type Inbound struct {
	Channel   string    // ChannelTelegram, ChannelCLI
	UpdateID  int64     // Telegram update_id (0 for the CLI)
	ChatID    int64     // Telegram chat id; equals UserID in a DM
	ChatKind  string    // ChatDM or ChatGroup
	TopicID   int64     // forum topic (message_thread_id) or 0
	UserID    int64     // sender
	UserName  string    // display name, for prompts in groups
	MessageID int64     // message id inside the chat
	Text      string    // the text as typed
	Date      time.Time // the message's own time (received_at)

	// Addressed is true when the message is meant for the bot in a group:
	// it mentions the bot, replies to it or is a command addressed to it.
	Addressed bool

	// Attachments are the files that came with the message (Text is then
	// the caption). The media step reads them for this turn only and fills
	// Images and Documents; a transcribed voice note becomes Text.
	Attachments []*Attachment
	Images      []ImagePart    // for a vision model, this turn only
	Documents   []DocumentPart // untrusted: they taint the turn
	Heard       string         // the transcript of a voice note or audio, when it became Text

	// Untrusted, when set, says why Text is not the user's own words (a
	// forwarded message, a scheduled task created while untrusted content
	// was in the turn). Such a message taints its turn and reaches the
	// model fenced as data.
	Untrusted string

	// Surface is the door it came in by (SurfaceOf fills it in when
	// empty); Origin where its words come from: only the sender's own
	// words run commands and clock directives (package desk).
	Surface Surface
	Origin  Origin
	// Turn is what the turn is for: a user's message, or a scheduled
	// task's prompt (its tools follow schedules.tasks_may_use_tools).
	Turn TurnKind
}

// ThreadKey identifies the conversation the message belongs to (CLOCK.md
// §7.2): agent identity, channel and thread.
//
//	agent:main:telegram:dm:<user_id>
//	agent:main:telegram:group:<chat_id>
//	agent:main:telegram:group:<chat_id>:topic:<topic_id>
func (m *Inbound) ThreadKey() string {
	return ThreadKey(m.Channel, m.ChatKind, m.ChatID, m.UserID, m.TopicID)
}

// UserKey identifies the sender, scoped to the channel (CLOCK.md §7.0: users
// are distinct per channel unless explicitly linked).
func (m *Inbound) UserKey() string { return UserKey(m.Channel, m.UserID) }

// ThreadKey builds a thread key; see Inbound.ThreadKey.
func ThreadKey(channel, chatKind string, chatID, userID, topicID int64) string {
	if chatKind == ChatDM {
		return "agent:" + AgentID + ":" + channel + ":dm:" + strconv.FormatInt(userID, 10)
	}
	k := "agent:" + AgentID + ":" + channel + ":group:" + strconv.FormatInt(chatID, 10)
	if topicID != 0 {
		k += ":topic:" + strconv.FormatInt(topicID, 10)
	}
	return k
}

// UserKey builds a channel-scoped user key such as "telegram:42".
func UserKey(channel string, userID int64) string {
	return channel + ":" + strconv.FormatInt(userID, 10)
}

// MaxInboundText is the longest user text accepted into a turn (in bytes).
// Telegram caps messages at 4096 characters; the CLI is capped the same way
// so one pasted file cannot blow the model's context.
const MaxInboundText = 16 * 1024
