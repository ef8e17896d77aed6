package desk

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/schedules"
)

// Door is how a firing reaches its thread at one door: Telegram's bot,
// or the terminal of kairos chat. The desk composes; the door only waits
// for the thread's turn and renders.
type Door interface {
	// InTurn runs fn in the thread's turn order: after the turn under
	// way and before the messages that arrive meanwhile.
	InTurn(ctx context.Context, addr *kairos.Inbound, fn func(ctx context.Context)) error
	// Sent reports whether what key names went out already (an earlier
	// attempt got that far), with its message id.
	Sent(ctx context.Context, key string) (int64, bool)
	// Send delivers out to addr once under key, and returns the message
	// id (0 where there is none).
	Send(ctx context.Context, key string, addr *kairos.Inbound, out *kairos.Outgoing) (int64, error)
}

// Deliver is the schedules runner's delivery through door: a task is a
// turn of its thread, so it runs in the thread's turn order and sees the
// turn before it; reminders, cells and missed reports are notices, sent at
// their time without waiting. A firing is composed once; a retry after it
// went out does not run its task again.
func (fs *Firings) Deliver(door Door) func(ctx context.Context, d schedules.Delivery) (int64, error) {
	return func(ctx context.Context, d schedules.Delivery) (int64, error) {
		addr, err := AddressOf(d.Schedule.ThreadKey, d.Schedule.UserID)
		if err != nil {
			return 0, err
		}
		if d.Schedule.Kind != kairos.ScheduleTask || d.Missed {
			return fs.deliver(ctx, door, d, &addr)
		}
		var id int64
		if qerr := door.InTurn(ctx, &addr, func(ctx context.Context) { id, err = fs.deliver(ctx, door, d, &addr) }); qerr != nil {
			return 0, qerr
		}
		return id, err
	}
}

func (fs *Firings) deliver(ctx context.Context, door Door, d schedules.Delivery, addr *kairos.Inbound) (int64, error) {
	key := fmt.Sprintf("schedule:%d", d.Firing.ID)
	if id, ok := door.Sent(ctx, key); ok {
		return id, nil
	}
	out, err := fs.Compose(ctx, d, *addr)
	if err != nil || out == nil {
		return 0, err
	}
	return door.Send(ctx, key, addr, out)
}

// AddressOf is where a schedule of thread (CLOCK.md §7.2 keys) and user
// is delivered: agent:<id>:<channel>:dm:<user> or
// agent:<id>:<channel>:group:<chat>[:topic:<t>].
func AddressOf(thread string, user int64) (kairos.Inbound, error) {
	parts := strings.Split(thread, ":")
	bad := kairos.Errorf(kairos.EINVALID, "thread %s cannot receive scheduled messages", thread)
	if len(parts) < 5 || parts[0] != "agent" || (parts[3] != kairos.ChatDM && parts[3] != kairos.ChatGroup) {
		return kairos.Inbound{}, bad
	}
	chat, err := strconv.ParseInt(parts[4], 10, 64)
	if err != nil {
		return kairos.Inbound{}, bad
	}
	in := kairos.Inbound{Channel: parts[2], ChatKind: parts[3], ChatID: chat, UserID: user, Surface: kairos.SurfaceScheduled}
	if len(parts) == 7 && parts[5] == "topic" {
		in.TopicID, _ = strconv.ParseInt(parts[6], 10, 64)
	}
	return in, nil
}
