package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"strings"

	// Decoders of the formats Telegram users send.
	_ "image/gif"
	_ "image/png"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"github.com/kairos-agent/kairos"
)

// MaxImagePixels and MaxImageBytes bound what is decoded: a small file
// can declare a huge canvas (a decompression bomb), so its size is checked
// from the header before decoding, in pixels and in the bytes the decoded
// image takes (a 16-bit RGBA pixel is 8 bytes, a paletted one 1).
const (
	MaxImagePixels = 50_000_000
	MaxImageBytes  = 160 << 20
)

const jpegQuality = 85

// image downloads an image and adds it, scaled down, to the turn.
func (h *Handler) image(ctx context.Context, pol *kairos.Policy, in *kairos.Inbound, a *kairos.Attachment) (string, error) {
	data, msg, err := h.fetch(ctx, a)
	if msg != "" || err != nil {
		return msg, err
	}
	url, err := PrepareImage(data, pol.Media.MaxImageSide)
	if err != nil {
		if m := userError(err); m != "" {
			h.cfg.Metrics.MediaFailure(a.Kind, "bad_image")
			return m, nil
		}
		return "", err
	}
	h.cfg.Metrics.MediaFile(a.Kind, int64(len(data)))
	part := kairos.ImagePart{Name: a.Name, DataURL: url}
	if pol.Media.StoreImages && h.cfg.DataDir != "" {
		if part.Stored, err = storeImage(h.cfg.DataDir, url); err != nil {
			h.log.Error("keep image", "err", err) // the turn goes on; the image is not kept
		}
	}
	in.Images = append(in.Images, part)
	return "", nil
}

// storeImage writes the scaled JPEG to <dataDir>/media/<sha256>.jpg
// (atomically: a temporary file renamed) and returns its path relative to
// dataDir. The same image is stored once.
func storeImage(dataDir, dataURL string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(dataURL, "data:image/jpeg;base64,"))
	if err != nil {
		return "", fmt.Errorf("store image: %w", err)
	}
	sum := sha256.Sum256(raw)
	rel := filepath.Join("media", hex.EncodeToString(sum[:])+".jpg")
	dir := filepath.Join(dataDir, "media")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("store image: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".img-*")
	if err != nil {
		return "", fmt.Errorf("store image: %w", err)
	}
	_, werr := tmp.Write(raw)
	cerr := tmp.Close()
	if werr == nil && cerr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dataDir, rel))
	}
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("store image: %w", errors.Join(werr, cerr))
	}
	return rel, nil
}

// fetch downloads a whole file (documents and images need random access
// or a decode; Telegram caps them at 20 MB).
func (h *Handler) fetch(ctx context.Context, a *kairos.Attachment) ([]byte, string, error) {
	rc, err := a.Open(ctx)
	if err != nil {
		if m := userError(err); m != "" {
			h.cfg.Metrics.MediaFailure(a.Kind, "too_big")
			return nil, m, nil
		}
		h.log.Warn("download failed", "kind", a.Kind, "err", err)
		h.cfg.Metrics.MediaFailure(a.Kind, "download")
		return nil, msgDownloadFailed, nil
	}
	defer rc.Close()
	var buf bytes.Buffer
	if a.Size > 0 && a.Size <= kairos.MaxDownloadBytes {
		buf.Grow(int(a.Size))
	}
	if _, err := io.Copy(&buf, rc); err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if m := userError(err); m != "" {
			h.cfg.Metrics.MediaFailure(a.Kind, "too_big")
			return nil, m, nil
		}
		h.log.Warn("download failed", "kind", a.Kind, "err", err)
		h.cfg.Metrics.MediaFailure(a.Kind, "download")
		return nil, msgDownloadFailed, nil
	}
	return buf.Bytes(), "", nil
}

// PrepareImage decodes a JPEG, PNG, GIF or WebP image, scales it so that
// its longer side is at most maxSide pixels, and returns it as a JPEG
// data: URL. Unreadable or oversized images are EINVALID with a sentence
// for the user.
func PrepareImage(data []byte, maxSide int) (string, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", kairos.Errorf(kairos.EINVALID, "Sorry, I couldn't open that image: it seems damaged, or it isn't a JPEG, PNG, GIF or WebP picture.")
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxImagePixels {
		return "", kairos.Errorf(kairos.EINVALID, "That image is too large for me to open (%d×%d pixels; I handle up to %d megapixels). Please send a smaller version.",
			cfg.Width, cfg.Height, MaxImagePixels/1_000_000)
	}
	if n := decodedBytes(cfg); n > MaxImageBytes {
		return "", kairos.Errorf(kairos.EINVALID, "That image is too large for me to open (%d×%d pixels take %d MB once opened; I open up to %d MB). Please send a smaller version.",
			cfg.Width, cfg.Height, n>>20, MaxImageBytes>>20)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return "", kairos.Errorf(kairos.EINVALID, "Sorry, I couldn't open that image: it seems damaged, or it isn't a JPEG, PNG, GIF or WebP picture.")
	}
	b := src.Bounds()
	w, hgt := b.Dx(), b.Dy()
	if maxSide <= 0 {
		maxSide = kairos.DefaultMaxImageSide
	}
	if w > maxSide || hgt > maxSide {
		if w >= hgt {
			hgt, w = max(1, hgt*maxSide/w), maxSide
		} else {
			w, hgt = max(1, w*maxSide/hgt), maxSide
		}
	}
	// JPEG has no transparency: draw on white.
	dst := image.NewRGBA(image.Rect(0, 0, w, hgt))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Over, nil)
	var out bytes.Buffer
	if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: jpegQuality}); err != nil {
		return "", fmt.Errorf("encode image: %w", err)
	}
	return "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(out.Bytes()), nil
}

// decodedBytes is how many bytes the image that cfg describes takes once
// decoded, from its colour model: 8 per pixel for 16-bit RGBA, 2 for
// 16-bit grey, 1 for grey or a palette, 4 for 8-bit RGBA and CMYK, and 3
// for YCbCr (JPEG and lossy WebP, 4:4:4 at worst) plus 1 when it carries
// alpha.
func decodedBytes(cfg image.Config) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	return px * bytesPerPixel(cfg.ColorModel)
}

func bytesPerPixel(m color.Model) int64 {
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	switch m {
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.YCbCrModel:
		return 3
	case color.NYCbCrAModel:
		return 4
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 4
	}
	return 8 // unknown: the widest
}
