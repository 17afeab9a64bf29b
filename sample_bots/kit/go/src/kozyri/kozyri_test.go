package kozyri

import (
	"encoding/json"
	"strings"
	"testing"
)

// recorder keeps what Choose saw and plays the last legal action.
type recorder struct {
	seen    []string
	actions []string
	hello   *Hello
}

func (r *recorder) OnHello(h *Hello) { r.hello = h }

func (r *recorder) Choose(q *Request) int {
	text, _ := json.Marshal(q.Observation)
	r.seen = append(r.seen, string(text))
	r.actions = append(r.actions, q.Legal[len(q.Legal)-1].Type)
	q.Debug = "hand " + string(rune('0'+len(q.Observation.Hand())))
	q.Observation["hand"] = []any{} // the bot's copy: the kit's own must not change
	return len(q.Legal) - 1
}

const (
	hello = `{"type":"hello","protocol":1,"game":"svoi-kozyri","players":2,"seat":1,` +
		`"params":{"deals":1},"variant":null,"time":{"init_ms":10000},"name":"x"}`
	full = `{"type":"request","id":3,"deal":0,"observation":{"game":"svoi-kozyri","seat":1,` +
		`"hand":["8S","QS"],"pile":["9C"],"hand_counts":[9,2],"gone":true,"ratio":0.25,` +
		`"history":[{"type":"lead","seat":0,"card":"9C"}]},"legal_actions":` +
		`[{"type":"beat","card":"QS"},{"type":"pick_up"}],"time_left_ms":29500,"move_ms":1000}`
	delta = `{"type":"request","id":4,"deal":0,"delta":{"set":{"hand":["8S"],` +
		`"hand_counts":[8,1],"mode":"respond"},"append":{"pile":["QS","TH"],` +
		`"history":[{"type":"beat","seat":1,"card":"QS"}]},"drop":["gone"]},` +
		`"legal_actions":[{"type":"second","card":"8S"}],"time_left_ms":29000,"move_ms":1000}`
	// The referee's whole observation after both, keys sorted as encoding/json writes them.
	rebuilt = `{"game":"svoi-kozyri","hand":["8S"],"hand_counts":[8,1],"history":` +
		`[{"card":"9C","seat":0,"type":"lead"},{"card":"QS","seat":1,"type":"beat"}],` +
		`"mode":"respond","pile":["9C","QS","TH"],"ratio":0.25,"seat":1}`
)

func handle(t *testing.T, s *Session, line string) string {
	t.Helper()
	answer, err := s.Handle([]byte(line))
	if err != nil {
		t.Fatalf("Handle(%s): %v", line, err)
	}
	return string(answer)
}

func TestHelloIsAnsweredWithReadyAskingForDeltas(t *testing.T) {
	bot := &recorder{}
	got := handle(t, NewSession(bot, Options{Name: "recorder"}), hello)
	want := `{"name":"recorder","observations":"delta","protocol":1,"type":"ready"}`
	if got != want || bot.hello.Seat != 1 || bot.hello.Game != "svoi-kozyri" {
		t.Fatalf("got %s, hello %+v", got, bot.hello)
	}
}

func TestFullObservationsAreNotAskedFor(t *testing.T) {
	got := handle(t, NewSession(&recorder{}, Options{Observations: "full"}), hello)
	if got != `{"protocol":1,"type":"ready"}` {
		t.Fatalf("got %s", got)
	}
}

func TestARequestIsAnsweredByIndexWithItsID(t *testing.T) {
	bot := &recorder{}
	s := NewSession(bot, Options{})
	handle(t, s, hello)
	got := handle(t, s, full)
	if got != `{"debug":"hand 2","id":3,"index":1,"type":"action"}` || bot.actions[0] != "pick_up" {
		t.Fatalf("got %s, actions %v", got, bot.actions)
	}
}

func TestADeltaRebuildsTheWholeObservationExactly(t *testing.T) {
	bot := &recorder{}
	s := NewSession(bot, Options{})
	handle(t, s, hello)
	handle(t, s, full)
	got := handle(t, s, delta)
	if got != `{"debug":"hand 1","id":4,"index":0,"type":"action"}` {
		t.Fatalf("got %s", got)
	}
	if bot.seen[1] != rebuilt {
		t.Fatalf("rebuilt\n %s\nwant\n %s", bot.seen[1], rebuilt)
	}
	handle(t, s, `{"type":"deal_end","deal":0,"delta":{"set":{"deal":1}}}`)
	handle(t, s, `{"type":"news","x":[1,2.5,null]}`)
	handle(t, s, `{"type":"shutdown"}`)
	if !s.Finished {
		t.Fatal("shutdown did not end the session")
	}
}

func TestMalformedMessagesAreRefusedClearly(t *testing.T) {
	cases := map[string]string{
		`{"type":"hello","seat":`:         "malformed JSON",
		`{} x`:                            "text after the message",
		`{"id":1}`:                        `needs a string "type"`,
		`[1]`:                             "malformed JSON",
		`{"type":"hello","game":"svara"}`: `a number "seat"`,
	}
	for line, want := range cases {
		_, err := NewSession(&recorder{}, Options{}).Handle([]byte(line))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", line, err, want)
		}
	}
	s := NewSession(&recorder{}, Options{})
	handle(t, s, hello)
	if _, err := s.Handle([]byte(delta)); err == nil || !strings.Contains(err.Error(), "appends to") {
		t.Errorf("a delta on nothing: got %v", err)
	}
}

func TestCards(t *testing.T) {
	if Rank("TH") != 10 || Rank("AS") != 14 || !Beats("6S", "AH", 'S') || Beats("6S", "7S", 'S') {
		t.Fatal("card helpers are wrong")
	}
}
