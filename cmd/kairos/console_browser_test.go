package main

import (
	"bytes"
	"cmp"
	"context"
	"image"
	"image/color"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// chromium finds a browser for the console test: KAIROS_CHROMIUM, or
// Debian's chromium on the PATH (.ci/run installs it).
func chromium(t *testing.T) string {
	if p := os.Getenv("KAIROS_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on this machine (apt-get install chromium, or set KAIROS_CHROMIUM): the console's browser test is skipped")
	return ""
}

// browser starts a headless Chromium with a fresh profile and no
// background traffic (this machine has no internet).
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.WindowSize(width, height))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	// A safety net against a hung browser, not a speed limit: the test's
	// own deadline (CI runs the SQLite and PostgreSQL passes side by side
	// on two cores, where one test's many pages took past three minutes).
	ctx, cancelT := context.WithDeadline(ctx, testkit.GiveUpAt(t))
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	return ctx
}

// shotDir is where screenshots go: doc/console with
// KAIROS_SCREENSHOTS=1 (to refresh the docs), else a temporary directory.
func shotDir(t *testing.T) string {
	if os.Getenv("KAIROS_SCREENSHOTS") == "1" {
		return filepath.Join("..", "..", "doc", "console")
	}
	return t.TempDir()
}

// shot saves a full-page PNG of the tab, in at most 256 colours (the
// pages are flat colours and text: the pictures stay small in the
// repository).
func shot(dir, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		b, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return err
		}
		if b, err = smallPNG(b); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644)
	})
}

// smallPNG redraws a screenshot with the 256 colours it uses most, each
// pixel as the nearest of them. A page is mostly runs of one colour: each
// run is converted, counted and looked up once (the per-pixel image.At
// of a full page took 2-8 s per shot under -race).
func smallPNG(b []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	bounds := img.Bounds()
	px := rgbaPixels(img)
	counts := map[color.RGBA]int{}
	for i := 0; i < len(px); {
		j := i + 1
		for j < len(px) && px[j] == px[i] {
			j++
		}
		counts[px[i]] += j - i
		i = j
	}
	colors := slices.Collect(maps.Keys(counts))
	slices.SortFunc(colors, func(a, b color.RGBA) int {
		if d := counts[b] - counts[a]; d != 0 {
			return d
		}
		return cmp.Compare(packRGBA(a), packRGBA(b)) // ties in a fixed order: the same page, the same picture
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range colors[:min(256, len(colors))] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(bounds, pal)
	index := map[color.RGBA]uint8{}
	w := bounds.Dx()
	for k, c := range px {
		if k > 0 && c == px[k-1] {
			out.Pix[(k/w)*out.Stride+k%w] = out.Pix[((k-1)/w)*out.Stride+(k-1)%w]
			continue
		}
		i, ok := index[c]
		if !ok {
			i = uint8(pal.Index(c))
			index[c] = i
		}
		out.Pix[(k/w)*out.Stride+k%w] = i
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func packRGBA(c color.RGBA) uint32 {
	return uint32(c.R)<<24 | uint32(c.G)<<16 | uint32(c.B)<<8 | uint32(c.A)
}

// rgbaPixels is every pixel of img as color.RGBA (what
// color.RGBAModel.Convert gives), row by row; a run of equal bytes in a
// decoded PNG's buffer is converted once.
func rgbaPixels(img image.Image) []color.RGBA {
	bounds := img.Bounds()
	w, h := bounds.Dx(), bounds.Dy()
	out := make([]color.RGBA, 0, w*h)
	var pix []byte
	var stride int
	var conv func(p []byte) color.RGBA
	switch m := img.(type) {
	case *image.RGBA:
		pix, stride = m.Pix, m.Stride
		conv = func(p []byte) color.RGBA { return color.RGBA{p[0], p[1], p[2], p[3]} }
	case *image.NRGBA:
		pix, stride = m.Pix, m.Stride
		conv = func(p []byte) color.RGBA {
			return color.RGBAModel.Convert(color.NRGBA{p[0], p[1], p[2], p[3]}).(color.RGBA)
		}
	default:
		for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
			for x := bounds.Min.X; x < bounds.Max.X; x++ {
				out = append(out, color.RGBAModel.Convert(img.At(x, y)).(color.RGBA))
			}
		}
		return out
	}
	var last color.RGBA
	var lastRaw []byte
	for y := range h {
		row := pix[y*stride : y*stride+4*w]
		for x := 0; x < 4*w; x += 4 {
			p := row[x : x+4]
			if lastRaw == nil || !bytes.Equal(p, lastRaw) {
				last, lastRaw = conv(p), p
			}
			out = append(out, last)
		}
	}
	return out
}

// text reads an element's text into *out.
func text(sel string, out *string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		v, err := chromedp.Text(chromedp.CSS(sel))(ctx, t)
		*out = v
		return err
	})
}

// TestConsoleInBrowser signs in through the link from the fake Telegram,
// approves a pending request from the approvals page and watches the turn
// finish in the chat, then saves a policy with an error and sees its
// line and column (the sign-in page and the error are photographed;
// TestConsolePagesInBrowser photographs every other page).
func TestConsoleInBrowser(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(approvalModel)
	addr := e.start()
	base := "http://" + addr
	ctx := browser(t, 1200, 900)
	dir := shotDir(t)

	e.tg.PushText(approvalChat, approvalChat, "remember that I live in Lisbon", time.Now())
	waitReply(t, e.tg, approvalChat, 1, "Done")
	e.tg.PushText(approvalChat, approvalChat, "forget where I live", time.Now())
	waitReply(t, e.tg, approvalChat, 2, "Approval needed")
	link := consoleLink(t, e, 1)

	var overview, flash string
	err := chromedp.Do(ctx,
		chromedp.Navigate(link), shot(dir, "signin"),
		chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.CSS(".tiles")),
		text("main", &overview),
		chromedp.Navigate(base+"/console/approvals?status=pending"), chromedp.WaitVisible(chromedp.CSS(".approval")),
		chromedp.Click(chromedp.CSS(`.approval button[value="1"]`)), chromedp.WaitVisible(chromedp.CSS(".flash")),
		text(".flash", &flash),
	)
	if err != nil {
		t.Fatalf("browser: %v\n%s", err, e.logs.String())
	}
	if !strings.Contains(overview, "pending approvals") || !strings.Contains(flash, "Approved") {
		t.Fatalf("overview %q, flash %q", overview, flash)
	}
	waitReply(t, e.tg, approvalChat, 3, "Forget outcome")

	var problems string
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/policy"), chromedp.WaitVisible(chromedp.ID("policy")),
		chromedp.SetValue(chromedp.ID("policy"), "access:\n  operators: [1001]\nagent:\n  max_stepz: 3\n"),
		chromedp.Click(chromedp.ID("save")), chromedp.WaitVisible(chromedp.ID("problems")),
		text("#problems", &problems), shot(dir, "policy-error"),
	)
	if err != nil {
		t.Fatalf("policy editor: %v", err)
	}
	if !strings.Contains(problems, "line 4, column 3") {
		t.Fatalf("the editor said %q, want line 4, column 3", problems)
	}
}
