// Package chart draws the PNG charts the bot sends (the /usage picture):
// bar charts on go-analyze/charts, a maintained pure-Go renderer (no cgo,
// no fonts to install: it embeds its own).
//
// It must not know Kairos's data or reach for it: no store, no policy, no
// kairos types; callers hand it titles, labels and values and get PNG
// bytes back. It must not send, log, cache or write files, and must not
// depend on cgo, system fonts or anything installed on the host, so a
// chart draws the same on every machine (tests count its bars with
// CountBars).
package chart
