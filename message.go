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

// The doors into Kairos (private chats, groups, the terminal, the API,
// scheduled firings) hand every inbound to one front desk (package desk),
// which decides who may do what. These are the nouns it decides with.

// Surface is the door a message came in by.
type Surface string

// Surfaces.
const (
	SurfacePrivate   Surface = "private"   // a Telegram private chat
	SurfaceGroup     Surface = "group"     // a Telegram group or forum topic
	SurfaceTerminal  Surface = "terminal"  // kairos chat
	SurfaceAPI       Surface = "api"       // POST /api/v1/messages, the console
	SurfaceScheduled Surface = "scheduled" // a firing: nobody is there
)

// Private reports whether only the principal reads what is answered here:
// a private chat or the terminal. The API's caller is not the user, and a
// group has other members.
func (s Surface) Private() bool { return s == SurfacePrivate || s == SurfaceTerminal }

// SurfaceOf is the door of a message that does not say (the Telegram and
// terminal adapters set Surface; older callers need not).
func SurfaceOf(in *Inbound) Surface {
	switch {
	case in.Surface != "":
		return in.Surface
	case in.Channel == ChannelCLI:
		return SurfaceTerminal
	case in.ChatKind == ChatGroup:
		return SurfaceGroup
	}
	return SurfacePrivate
}

// Origin is where the words of a message come from.
type Origin string

// Origins. Only OriginOwn words may run a command or a clock directive;
// the others are content, untrusted.
const (
	OriginOwn       Origin = ""          // typed (or spoken) by the sender
	OriginForwarded Origin = "forwarded" // a forwarded message
	OriginChannel   Origin = "channel"   // a channel's post (automatic forward)
	OriginFiring    Origin = "firing"    // a scheduled task's prompt
)

// Role is what the principal may do.
type Role int

// Roles, in order of power.
const (
	StrangerRole Role = iota // may not reach the agent
	UserRole                 // an allowed user
	OperatorRole             // may also run the operators' commands
)

// Principal is who is asking.
type Principal struct {
	UserID int64
	Role   Role
}

// TurnKind says what a turn is for; it decides the tools it is offered.
type TurnKind string

// Turn kinds.
const (
	TurnUser    TurnKind = ""        // someone wrote
	TurnTask    TurnKind = "task"    // a scheduled task's prompt
	TurnCell    TurnKind = "cell"    // a watching cell (no model turn today)
	TurnSummary TurnKind = "summary" // a session summary or roll-up
)

// Button is one button of an inline keyboard: its label and the data a
// press sends back.
type Button struct {
	Text string
	Data string
}

// Outgoing is a message Kairos sends on its own (a firing): one value,
// built once, that every door only renders.
type Outgoing struct {
	Text    string
	Buttons [][]Button
	// Tainted says the text may carry untrusted content (the door may
	// mark it; the text already says so in words).
	Tainted bool
}
