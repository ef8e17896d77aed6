// Package web is the operator's front end over HTTP: the query API under
// /api/v1 (bearer tokens, JSON, an OpenAPI 3.1 document kept true by a
// test) and the console under /console (server-rendered pages, signed in
// through a single-use link from Telegram, a session cookie and a CSRF
// token on every form).
//
// Like bot, it is an adapter: it speaks HTTP and knows nothing of the
// store or the agent; cmd/kairos hands it a Backend. It must not hold a
// secret in a page, a log line or an error, and every write it makes is
// recorded with who made it.
package web
