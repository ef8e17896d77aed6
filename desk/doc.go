// Package desk is Kairos's front desk: every door (a Telegram private
// chat or group, the terminal, the API, a scheduled firing) hands its
// input here, and renders what the desk answers.
//
// The desk decides, once for every door, who may do what: whether a
// message is a command (only the sender's own words are; forwarded or
// channel text is content, never a command or a clock directive), who may
// run it (allowed users or operators) and where (anywhere, or only where
// nobody else reads the answer), how an error becomes a reply, and what a
// scheduled firing says.
//
// It must not know about Telegram or the terminal: no Bot API types, no
// keyboards' wire format, no line editing. Doors adapt to it; it never
// adapts to a door.
package desk
