// Package kozyri is the starter kit for Kozyri Arena bots in Go (standard library only).
//
// Implement Bot (one method, Choose) and call Run. The kit speaks protocol v1: it answers
// hello with ready, turns every request into a call to Choose and sends the answer, and
// returns on shutdown. It asks for observations as deltas and rebuilds each whole observation
// from them, key for key and value for value as the referee would send it (Options.Observations
// = "full" to be sent each one whole). stdout belongs to the protocol: Run keeps it for itself
// and points os.Stdout at stderr, so a stray fmt.Println is a log line, never invalid output.
// Log with Log. On the platform your bot is frozen between its turns: think inside Choose.
//
//	type first struct{}
//
//	func (first) Choose(r *kozyri.Request) int { return 0 }
//
//	func main() { kozyri.Run(first{}, kozyri.Options{Name: "first"}) }
//
// Build in GOPATH mode with the kit's folder as GOPATH (no module download, no network):
//
//	GO111MODULE=off GOPATH="$KOZYRI_KIT/go" GOCACHE=/tmp/kozyri-go-cache go build -o bot .
package kozyri

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ProtocolVersion is the protocol the kit speaks.
const ProtocolVersion = 1

// Bot chooses a move: an index into r.Legal (never empty).
type Bot interface {
	Choose(r *Request) int
}

// HelloHandler is implemented by bots that want to know about the match before it starts.
type HelloHandler interface{ OnHello(h *Hello) }

// ErrorHandler is told when the referee rejected an answer and played the default action.
type ErrorHandler interface{ OnError(message map[string]any) }

// DealEndHandler is told at the end of each deal, with the view right after it.
type DealEndHandler interface {
	OnDealEnd(observation Observation, message map[string]any)
}

// MatchEndHandler is told the result; message["place"] is your place (1 is best).
type MatchEndHandler interface{ OnMatchEnd(message map[string]any) }

// Options are sent in ready.
type Options struct {
	Name         string // a display name shown next to the manifest's (empty: none)
	Observations string // "delta" (the default) or "full"
}

// Hello is the first message: which game, your seat, the time limits.
type Hello struct {
	Game    string
	Players int
	Seat    int
	Params  map[string]any
	Variant any
	Raw     map[string]any
}

// Request is your turn: the whole observation, the legal actions, your clock.
type Request struct {
	ID          json.Number
	Deal        int
	Observation Observation
	Legal       []Action
	TimeLeftMs  int64
	MoveMs      int64
	Debug       string // set in Choose to store a note with the move (up to 1,024 characters)
}

// Action is one legal action as sent: its type, its card if it has one, every key in Raw.
type Action struct {
	Type string
	Card string
	Raw  map[string]any
}

// Observation is everything your seat may know, as parsed (numbers are json.Number). It is
// your own copy: change it freely.
type Observation map[string]any

// Game is the observation's game.
func (o Observation) Game() string { s, _ := o["game"].(string); return s }

// Seat is your seat, 0-based.
func (o Observation) Seat() int { return toInt(o["seat"]) }

// Hand is your cards, e.g. ["8S", "QS"].
func (o Observation) Hand() []string { return strings1(o["hand"]) }

// HandCounts is how many cards each seat holds.
func (o Observation) HandCounts() []int {
	items, _ := o["hand_counts"].([]any)
	out := make([]int, len(items))
	for i, item := range items {
		out[i] = toInt(item)
	}
	return out
}

// History is the public events of the deal, each an object with a "type".
func (o Observation) History() []map[string]any {
	items, _ := o["history"].([]any)
	out := make([]map[string]any, 0, len(items))
	for _, item := range items {
		if event, ok := item.(map[string]any); ok {
			out = append(out, event)
		}
	}
	return out
}

func toInt(value any) int {
	if n, ok := value.(json.Number); ok {
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}

func strings1(value any) []string {
	items, _ := value.([]any)
	out := make([]string, 0, len(items))
	for _, item := range items {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Log writes one line to stderr (the referee keeps it with the match log and the replay).
func Log(parts ...any) { fmt.Fprintln(os.Stderr, parts...) }

// Rank of a card: "TH" -> 10; the ace is 14.
func Rank(card string) int { return strings.IndexByte("56789TJQKA", card[0]) + 5 }

// Suit of a card: "TH" -> 'H'.
func Suit(card string) byte { return card[1] }

// Beats tells whether card beats top for a player whose own trump suit is trump (0: none).
func Beats(card, top string, trump byte) bool {
	if Suit(card) == Suit(top) {
		return Rank(card) > Rank(top)
	}
	return trump != 0 && Suit(card) == trump
}

// Session holds one match's state; Run drives it, tests call Handle directly.
type Session struct {
	bot      Bot
	options  Options
	kept     map[string]any
	Finished bool
	Hello    *Hello
}

// NewSession starts a session for bot.
func NewSession(bot Bot, options Options) *Session {
	if options.Observations == "" {
		options.Observations = "delta"
	}
	return &Session{bot: bot, options: options, kept: map[string]any{}}
}

// Handle reacts to one line from the referee: the answer line to send (nil for none), or an
// error naming what is wrong with a malformed message.
func (s *Session) Handle(line []byte) ([]byte, error) {
	message, err := decodeObject(line)
	if err != nil {
		return nil, err
	}
	kind, ok := message["type"].(string)
	if !ok {
		return nil, fmt.Errorf("a message needs a string \"type\", got %s", line)
	}
	switch kind {
	case "hello":
		return s.ready(message)
	case "request":
		return s.answer(message)
	case "error":
		if h, ok := s.bot.(ErrorHandler); ok {
			h.OnError(message)
		} else {
			Log("referee:", message["status"], message["message"])
		}
	case "deal_end":
		observation, err := s.observation(message)
		if err != nil {
			return nil, err
		}
		if h, ok := s.bot.(DealEndHandler); ok {
			h.OnDealEnd(observation, message)
		}
	case "match_end":
		if h, ok := s.bot.(MatchEndHandler); ok {
			h.OnMatchEnd(message)
		}
	case "shutdown":
		s.Finished = true
	}
	return nil, nil // other messages: later versions may add some, ignore them
}

func decodeObject(line []byte) (map[string]any, error) {
	decoder := json.NewDecoder(bytes.NewReader(line))
	decoder.UseNumber()
	var message map[string]any
	if err := decoder.Decode(&message); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if decoder.More() {
		return nil, errors.New("malformed JSON: text after the message")
	}
	if message == nil {
		return nil, errors.New("a message must be a JSON object")
	}
	return message, nil
}

func (s *Session) ready(message map[string]any) ([]byte, error) {
	game, ok1 := message["game"].(string)
	_, ok2 := message["seat"].(json.Number)
	if !ok1 || !ok2 {
		return nil, errors.New("hello needs a string \"game\" and a number \"seat\"")
	}
	params, _ := message["params"].(map[string]any)
	s.Hello = &Hello{game, toInt(message["players"]), toInt(message["seat"]), params, message["variant"], message}
	if h, ok := s.bot.(HelloHandler); ok {
		h.OnHello(s.Hello)
	}
	ready := map[string]any{"type": "ready", "protocol": ProtocolVersion}
	if s.options.Name != "" {
		ready["name"] = s.options.Name
	}
	if s.options.Observations != "full" {
		ready["observations"] = s.options.Observations
	}
	return json.Marshal(ready)
}

func (s *Session) answer(message map[string]any) ([]byte, error) {
	observation, err := s.observation(message)
	if err != nil {
		return nil, err
	}
	items, ok := message["legal_actions"].([]any)
	if !ok {
		return nil, errors.New("a request needs a list \"legal_actions\"")
	}
	request := &Request{Observation: observation, Deal: toInt(message["deal"])}
	request.ID, _ = message["id"].(json.Number)
	request.TimeLeftMs = int64(toInt(message["time_left_ms"]))
	request.MoveMs = int64(toInt(message["move_ms"]))
	for _, item := range items {
		raw, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("a legal action must be an object, got %v", item)
		}
		kind, _ := raw["type"].(string)
		card, _ := raw["card"].(string)
		request.Legal = append(request.Legal, Action{kind, card, raw})
	}
	index := s.bot.Choose(request)
	reply := map[string]any{"type": "action", "index": index}
	if request.ID != "" {
		reply["id"] = request.ID
	}
	if request.Debug != "" {
		reply["debug"] = request.Debug
	}
	return json.Marshal(reply)
}

// observation is the whole observation a request or deal_end carries, whole or as a delta,
// as a deep copy (the kit's own, which the next delta builds on, stays untouched).
func (s *Session) observation(message map[string]any) (Observation, error) {
	if delta, present := message["delta"]; present {
		object, ok := delta.(map[string]any)
		if !ok {
			return nil, errors.New("\"delta\" must be an object")
		}
		if err := ApplyDelta(s.kept, object); err != nil {
			return nil, err
		}
	} else {
		object, ok := message["observation"].(map[string]any)
		if !ok {
			return nil, errors.New("an \"observation\" or a \"delta\" object is needed")
		}
		s.kept = object
	}
	return Observation(deepCopy(s.kept).(map[string]any)), nil
}

// ApplyDelta brings observation (the last one received, or empty) up to date with delta, in
// place: keys in "drop" go, keys in "set" take their new value, lists in "append" grow.
func ApplyDelta(observation, delta map[string]any) error {
	if drop, ok := delta["drop"].([]any); ok {
		for _, key := range drop {
			if name, ok := key.(string); ok {
				delete(observation, name)
			}
		}
	}
	if set, ok := delta["set"].(map[string]any); ok {
		for key, value := range set {
			observation[key] = value
		}
	}
	if appended, ok := delta["append"].(map[string]any); ok {
		for key, value := range appended {
			list, ok1 := observation[key].([]any)
			items, ok2 := value.([]any)
			if !ok1 || !ok2 {
				return fmt.Errorf("the delta appends to %q, which is not a list", key)
			}
			observation[key] = append(list, items...)
		}
	}
	return nil
}

func deepCopy(value any) any {
	switch v := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, item := range v {
			out[key] = deepCopy(item)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = deepCopy(item)
		}
		return out
	}
	return value
}

// Run is the protocol loop: one message per stdin line until shutdown or the end of input.
// A malformed message ends the bot with status 2 and the reason on stderr.
func Run(bot Bot, options Options) {
	out := bufio.NewWriter(os.Stdout)
	os.Stdout = os.Stderr
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	session := NewSession(bot, options)
	for !session.Finished {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			answer, problem := session.Handle(line)
			if problem != nil {
				Log("kozyri kit: cannot read the referee's message:", problem)
				os.Exit(2)
			}
			if answer != nil {
				out.Write(append(answer, '\n'))
				out.Flush()
			}
		}
		if err == io.EOF {
			return
		} else if err != nil {
			Log("kozyri kit: stdin failed:", err)
			return
		}
	}
}
