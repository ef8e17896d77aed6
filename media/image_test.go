package media_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/media"
)

func encodePNG(t testing.TB, w, h int, alpha uint8) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 200, alpha})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decodeURL(t *testing.T, url string) image.Image {
	t.Helper()
	b64, ok := strings.CutPrefix(url, "data:image/jpeg;base64,")
	if !ok {
		t.Fatalf("not a JPEG data URL: %.40s", url)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestPrepareImage(t *testing.T) {
	cases := []struct {
		name       string
		data       []byte
		maxSide    int
		wantW      int
		wantH      int
		wantErr    string
		whiteAlpha bool
	}{
		{"landscape scaled", encodePNG(t, 2000, 1000, 255), 1568, 1568, 784, "", false},
		{"portrait scaled", encodePNG(t, 300, 900, 255), 300, 100, 300, "", false},
		{"small kept", encodePNG(t, 120, 80, 255), 1568, 120, 80, "", false},
		{"transparent on white", encodePNG(t, 10, 10, 0), 1568, 10, 10, "", true},
		{"corrupt", []byte("\x89PNG\r\n\x1a\nnot really"), 1568, 0, 0, "couldn't open that image", false},
		{"not an image", []byte("%PDF-1.4"), 1568, 0, 0, "couldn't open that image", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, err := media.PrepareImage(tc.data, tc.maxSide)
			if tc.wantErr != "" {
				if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.wantErr) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			img := decodeURL(t, url)
			if b := img.Bounds(); b.Dx() != tc.wantW || b.Dy() != tc.wantH {
				t.Fatalf("size %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.wantW, tc.wantH)
			}
			if tc.whiteAlpha {
				r, g, b, _ := img.At(5, 5).RGBA()
				if r>>8 < 240 || g>>8 < 240 || b>>8 < 240 {
					t.Errorf("transparent pixel = %d,%d,%d, want white", r>>8, g>>8, b>>8)
				}
			}
		})
	}
}

func FuzzPrepareImage(f *testing.F) {
	f.Add(encodePNG(f, 4, 4, 255))
	f.Add([]byte("GIF89a\x01\x00\x01\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := media.PrepareImage(data, 64); err != nil && kairos.ErrorCode(err) != kairos.EINVALID {
			t.Fatalf("non-EINVALID error %v", err)
		}
	})
}

// TestPrepareImageDecodedBytes: images are refused by what they take once
// decoded (from the header), not by their pixel count alone: a 16-bit
// RGBA pixel takes 8 bytes.
func TestPrepareImageDecodedBytes(t *testing.T) {
	cases := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"16-bit RGBA, 25 MP (190 MiB decoded)", testkit.PNGBomb(5000, 5000, 16), "190 MB once opened"},
		{"8-bit RGBA, 49 MP (186 MiB decoded)", testkit.PNGBomb(7000, 7000, 8), "186 MB once opened"},
		{"16-bit RGBA, small", testkit.PNGBomb(300, 200, 16), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := media.PrepareImage(tc.data, 1568)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.wantErr) {
				t.Fatalf("err = %v, want EINVALID containing %q", err, tc.wantErr)
			}
		})
	}
}
