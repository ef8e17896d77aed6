package main

import (
	"context"
	"net"

	"github.com/kairos-agent/kairos/bot"
)

// preflight tries what `kairos run` most often fails on, before it opens
// the database, starts the jobs or logs anything: it binds
// KAIROS_HTTP_ADDR (served later by serveHTTP) and asks Telegram about
// the token. A failed start then prints its cause alone and exits 2.
func (m *Main) preflight(ctx context.Context) (net.Listener, error) {
	ln, err := net.Listen("tcp", m.Config.HTTPAddr)
	if err != nil {
		return nil, usagef("KAIROS_HTTP_ADDR %s: %v", m.Config.HTTPAddr, err)
	}
	m.onClose(func() error { ln.Close(); return nil }) // served, it is closed by the server's shutdown first
	err = bot.CheckToken(ctx, bot.Config{Token: m.Config.TelegramToken, APIURL: m.Config.TelegramAPIURL, Logger: m.logger()})
	if err != nil {
		return nil, err
	}
	return ln, nil
}
