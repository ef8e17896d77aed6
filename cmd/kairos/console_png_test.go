package main

import (
	"bytes"
	"cmp"
	"image"
	"image/color"
	"image/png"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveSmallPNG is smallPNG's rule written pixel by pixel: the 256 most
// used colours (ties in packRGBA order), each pixel as the nearest.
func naiveSmallPNG(img image.Image) *image.Paletted {
	bounds := img.Bounds()
	counts := map[color.RGBA]int{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	colors := slices.Collect(maps.Keys(counts))
	slices.SortFunc(colors, func(a, b color.RGBA) int {
		if d := counts[b] - counts[a]; d != 0 {
			return d
		}
		return cmp.Compare(packRGBA(a), packRGBA(b))
	})
	pal := color.Palette{}
	for _, c := range colors[:min(256, len(colors))] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(bounds, pal)
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			out.SetColorIndex(x, y, uint8(pal.Index(color.RGBAModel.Convert(img.At(x, y)).(color.RGBA))))
		}
	}
	return out
}

// flatAndNoise draws runs of a few flat colours with noisy anti-aliased
// spots (more than 256 colours when noisy), translucent ones included.
func flatAndNoise(r *rand.Rand, set func(x, y int, c color.NRGBA), w, h int, noisy bool) {
	flat := []color.NRGBA{{255, 255, 255, 255}, {20, 30, 40, 255}, {200, 220, 255, 255}, {90, 10, 10, 128}}
	c := flat[0]
	for y := range h {
		for x := range w {
			if r.IntN(12) == 0 {
				c = flat[r.IntN(len(flat))]
			}
			p := c
			if noisy && r.IntN(5) == 0 {
				p = color.NRGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(128 + r.IntN(128))}
			}
			set(x, y, p)
		}
	}
}

// longRun draws flatAndNoise's noisy picture, then a run of 1000 pixels
// of one colour and 300 colours twice each.
func longRun(r *rand.Rand, set func(x, y int, c color.NRGBA), w, h int, _ bool) {
	flatAndNoise(r, set, w, h, true)
	for k := range 1000 {
		set(k%w, k/w, color.NRGBA{7, 77, 177, 255})
	}
	for k := range 600 {
		set((1000+k)%w, (1000+k)/w, color.NRGBA{uint8(k % 300), uint8(k % 300 / 3), 5, 255})
	}
}

// TestSmallPNGIsThePixelByPixelRule: the run-wise smallPNG draws the same
// picture as the rule applied to each pixel, for the kinds of image a PNG
// decodes to (RGBA, NRGBA, and any other through At), with few colours
// and with more than 256.
func TestSmallPNGIsThePixelByPixelRule(t *testing.T) {
	parallel(t)
	r := rand.New(rand.NewPCG(36, 5))
	for k, pageLike := range []func(*rand.Rand, func(int, int, color.NRGBA), int, int, bool){flatAndNoise, flatAndNoise, longRun} {
		noisy := k > 0
		rgba := image.NewRGBA(image.Rect(0, 0, 61, 37))
		nrgba := image.NewNRGBA(image.Rect(0, 0, 61, 37))
		gray := image.NewGray16(image.Rect(0, 0, 61, 37))
		pageLike(r, func(x, y int, c color.NRGBA) { rgba.Set(x, y, c) }, 61, 37, noisy)
		pageLike(r, func(x, y int, c color.NRGBA) { nrgba.SetNRGBA(x, y, c) }, 61, 37, noisy)
		pageLike(r, func(x, y int, c color.NRGBA) { gray.Set(x, y, c) }, 61, 37, noisy)
		for name, img := range map[string]image.Image{"RGBA": rgba, "NRGBA": nrgba, "Gray16": gray} {
			var in bytes.Buffer
			if err := png.Encode(&in, img); err != nil {
				t.Fatal(err)
			}
			decoded, _ := png.Decode(bytes.NewReader(in.Bytes()))
			small, err := smallPNG(in.Bytes())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := png.Decode(bytes.NewReader(small))
			if err != nil {
				t.Fatalf("%s: the small PNG does not decode: %v", name, err)
			}
			var naive bytes.Buffer
			if err := png.Encode(&naive, naiveSmallPNG(decoded)); err != nil {
				t.Fatal(err)
			}
			want, _ := png.Decode(&naive)
			p, ok := got.(*image.Paletted)
			if !ok || len(p.Palette) > 256 || len(p.Palette) != len(want.(*image.Paletted).Palette) {
				t.Fatalf("%s (noisy %v): got %T, want a palette of %d colours", name, noisy, got, len(want.(*image.Paletted).Palette))
			}
			for y := range 37 {
				for x := range 61 {
					if g, w := color.RGBAModel.Convert(p.At(x, y)), color.RGBAModel.Convert(want.At(x, y)); g != w {
						t.Fatalf("%s (noisy %v) at %d,%d: %v, want %v", name, noisy, x, y, g, w)
					}
				}
			}
		}
	}
}
