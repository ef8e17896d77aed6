package main

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// A closed loop (-closed): every chat sends its first message at once, and
// each next one when the reply to the previous one is seen, the way a
// person waits for an answer. No chat ever has two messages waiting, so
// an agent that folds messages arriving during a turn into that turn
// (PicoClaw) does one turn per message, like kairos, and the two do the
// same work. -think waits that long before each next message (a person
// reading the answer); with none, the next message follows the reply at
// once, inside the moment an agent may still be closing the turn.

var echoText = regexp.MustCompile(`^echo: load (\d+) m(\d+)$`)

// driveClosed pushes the load as a closed loop, from b.loadStart. The
// goroutine ends when every message is pushed (or with the program, when
// a reply never comes).
func (b *bench) driveClosed() {
	next := make(chan string, len(b.load)+1024)
	b.tg.mu.Lock()
	prev := b.tg.onComplete
	b.tg.onComplete = func(text string, t time.Time) {
		if prev != nil {
			prev(text, t)
		}
		select { // called under tg.mu: never block
		case next <- text:
		default:
		}
	}
	b.tg.mu.Unlock()
	b.loadStart = time.Now()
	go func() {
		pushed := 0
		for c := range b.o.chats {
			b.tg.push(int64(10001+c), fmt.Sprintf("load %d m0", 10001+c))
			pushed++
		}
		for pushed < len(b.load) {
			sm := echoText.FindStringSubmatch(<-next)
			if sm == nil {
				continue
			}
			i, _ := strconv.Atoi(sm[2])
			if i+1 < b.o.messages {
				chat, text := mustInt64(sm[1]), fmt.Sprintf("load %s m%d", sm[1], i+1)
				if b.o.think > 0 {
					time.AfterFunc(b.o.think, func() { b.tg.push(chat, text) })
				} else {
					b.tg.push(chat, text)
				}
				pushed++
			}
		}
	}()
}

func mustInt64(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
