package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"

	"github.com/kairos-agent/kairos/internal/redact"
)

// Sealed secrets. getSecret never hands a cell a secret's value: it hands
// it a token, ⟦secret:NAME:NONCE⟧, with a nonce of the cell's own. The
// host puts the value in place of the token only where a request leaves
// for the network (URL, header values, body of fetch and its wrappers,
// under the network grant), and a response never brings a value back in
// (it is scrubbed before the cell sees it). So no transformation the cell
// can compute (reversing, character codes, XOR, base32, rot13, one
// character per print, pieces spread over several cells) has the secret
// to work on: what it transforms is the token. Tokens left in the cell's
// output become [REDACTED].

const (
	tokenOpen  = "⟦secret:"
	tokenClose = "⟧"
)

var reToken = regexp.MustCompile(`⟦secret:[^⟧]{0,200}⟧`)

// seal gives the cell its nonce and the replacer that unseals its tokens.
func (c *cell) seal() {
	var b [8]byte
	_, _ = rand.Read(b[:])
	c.nonce = hex.EncodeToString(b[:])
	var pairs []string
	for name, v := range c.task.Secrets {
		pairs = append(pairs, c.token(name), v)
	}
	c.unsealer = strings.NewReplacer(pairs...)
}

// token is the stand-in of secret name inside this cell.
func (c *cell) token(name string) string { return tokenOpen + name + ":" + c.nonce + tokenClose }

// unseal puts the secrets' values in place of this cell's tokens in s.
func (c *cell) unseal(s string) string {
	if c.unsealer == nil || !strings.Contains(s, tokenOpen) {
		return s
	}
	return c.unsealer.Replace(s)
}

// redactTokens replaces every secret token in s with [REDACTED].
func redactTokens(s string) string {
	if !strings.Contains(s, tokenOpen) {
		return s
	}
	return reToken.ReplaceAllString(s, redact.Redacted)
}

// sealErr keeps a secret's value out of an error thrown into the cell. A
// request's URL is unsealed before it is checked, so a refusal that names
// the URL's scheme or host (a token put there: "http://" + getSecret(…))
// would hand the cell the value, which it could then transform past any
// scrubbing. Values are replaced in any letter case (url.Parse lowers a
// scheme), by the secret's token, so the cell learns only what it already
// had.
func (c *cell) sealErr(err error) error {
	var he *hostError
	if !errors.As(err, &he) || len(c.task.Secrets) == 0 {
		return err
	}
	msg := he.msg
	for name, v := range c.task.Secrets {
		if len(v) < redact.MinSecretLen || !strings.Contains(strings.ToLower(msg), strings.ToLower(v)) {
			continue
		}
		re := regexp.MustCompile(`(?i)` + regexp.QuoteMeta(v))
		msg = re.ReplaceAllLiteralString(msg, c.token(name))
	}
	msg = c.red.Scrub(msg)
	if msg == he.msg {
		return err
	}
	return &hostError{name: he.name, msg: msg}
}
