package media_test

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/media"
)

// TestFilesDecodedAtOnceAreBounded: eight messages with a PDF each, read
// at once, download and decode at most media.max_parallel_files files at
// a time; the others wait their turn and are all answered.
func TestFilesDecodedAtOnceAreBounded(t *testing.T) {
	const messages, limit = 8, 2
	pol := kairos.DefaultPolicy()
	pol.Media.MaxParallelFiles = limit
	var answered atomic.Int32
	h := media.New(media.Config{Policy: func() *kairos.Policy { return pol },
		Next: nextFunc(func(context.Context, *kairos.Inbound, kairos.Replier) error {
			answered.Add(1)
			return nil
		})})
	data := testkit.MakePDF([]string{"a page of text"})
	var open, most atomic.Int32
	release := make(chan struct{})
	att := func() *kairos.Attachment {
		return &kairos.Attachment{Kind: kairos.AttachDocument, Name: "a.pdf", MIME: "application/pdf", Size: int64(len(data)),
			Open: func(context.Context) (io.ReadCloser, error) {
				n := open.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				<-release
				return &closer{Reader: bytes.NewReader(data), close: func() { open.Add(-1) }}, nil
			}}
	}
	var wg sync.WaitGroup
	for i := 0; i < messages; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := &discardReplier{}
			in := &kairos.Inbound{Attachments: []*kairos.Attachment{att()}}
			if err := h.HandleMessage(context.Background(), in, out); err != nil || out.final != "" {
				t.Errorf("err %v, reply %q", err, out.final)
			}
		}()
	}
	// Every message is either reading its file or waiting for its turn.
	if err := testkit.Poll(testkit.Deadline(t), func() bool {
		active, waiting := h.Decoding()
		return int(open.Load()) > limit || (active == limit && active+waiting == messages && int(open.Load()) == limit)
	}); err != nil {
		active, waiting := h.Decoding()
		t.Fatalf("messages never all arrived: active %d, waiting %d, open %d", active, waiting, open.Load())
	}
	close(release)
	wg.Wait()
	if m := most.Load(); m > limit {
		t.Errorf("%d files read at once, want at most %d", m, limit)
	}
	if n := answered.Load(); n != messages {
		t.Errorf("%d messages answered, want %d", n, messages)
	}
}

type closer struct {
	io.Reader
	close func()
}

func (c *closer) Close() error { c.close(); return nil }
