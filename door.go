package kairos

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
