// Any game, random: plays every game of the platform from the legal actions alone.
//
// The choice is random but reproducible: the generator is seeded from the game and the seat
// (the same generator as the JavaScript sample's), so the same match plays out the same way
// again, which makes a replay from the server easy to repeat with `arena match --repeat`.
package main

import (
	"fmt"
	"kozyri"
)

type anyGameRandom struct {
	state uint32
}

func (b *anyGameRandom) OnHello(h *kozyri.Hello) {
	b.state = hash(fmt.Sprintf("%s/%d/%d", h.Game, h.Players, h.Seat))
	kozyri.Log("playing", h.Game, "in seat", h.Seat, "of", h.Players)
}

func (b *anyGameRandom) Choose(r *kozyri.Request) int {
	index := int(b.random() * float64(len(r.Legal)))
	r.Debug = fmt.Sprintf("%d of %d", index+1, len(r.Legal))
	return index
}

// hash is FNV-1a over the characters of text.
func hash(text string) uint32 {
	h := uint32(2166136261)
	for _, c := range text {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// random is mulberry32: a small seeded generator, uniform in [0, 1).
func (b *anyGameRandom) random() float64 {
	b.state += 0x6d2b79f5
	t := (b.state ^ (b.state >> 15)) * (1 | b.state)
	t = (t + (t^(t>>7))*(61|t)) ^ t
	return float64(t^(t>>14)) / 4294967296
}

func main() {
	kozyri.Run(&anyGameRandom{}, kozyri.Options{Name: "any-game-random-go"})
}
