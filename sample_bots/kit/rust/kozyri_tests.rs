// Unit tests of the Rust kit, for plain rustc:
//   rustc --edition 2021 --test kozyri_tests.rs -o /tmp/kozyri-tests && /tmp/kozyri-tests

#[allow(dead_code)]
mod kozyri {
    include!("kozyri.rs");
}

use kozyri::{Bot, Json, Request, Session};

/// Keeps what choose saw and plays the last legal action.
struct Recorder {
    seen: Vec<String>,
    kinds: Vec<String>,
}

impl Bot for Recorder {
    fn choose(&mut self, request: &mut Request) -> usize {
        self.seen.push(request.observation.raw.to_string());
        self.kinds.push(request.legal.last().unwrap().kind.clone());
        request.debug = Some(format!("hand {}", request.observation.hand().len()));
        request.observation.raw.set("hand", Json::Array(vec![]));
        request.legal.len() - 1
    }
    fn name(&self) -> Option<String> {
        Some("recorder".into())
    }
}

const HELLO: &str = r#"{"type":"hello","protocol":1,"game":"svoi-kozyri","players":2,"seat":1,"params":{"deals":1},"variant":null,"time":{"init_ms":10000},"name":"x"}"#;
const FULL: &str = r#"{"type":"request","id":3,"deal":0,"observation":{"game":"svoi-kozyri","seat":1,"hand":["8S","QS"],"pile":["9C"],"hand_counts":[9,2],"gone":true,"ratio":0.25,"history":[{"type":"lead","seat":0,"card":"9C"}]},"legal_actions":[{"type":"beat","card":"QS"},{"type":"pick_up"}],"time_left_ms":29500,"move_ms":1000}"#;
const DELTA: &str = r#"{"type":"request","id":4,"deal":0,"delta":{"set":{"hand":["8S"],"hand_counts":[8,1],"mode":"respond"},"append":{"pile":["QS","TH"],"history":[{"type":"beat","seat":1,"card":"QS"}]},"drop":["gone"]},"legal_actions":[{"type":"second","card":"8S"}],"time_left_ms":29000,"move_ms":1000}"#;
const REBUILT: &str = r#"{"game":"svoi-kozyri","seat":1,"hand":["8S"],"pile":["9C","QS","TH"],"hand_counts":[8,1],"ratio":0.25,"history":[{"type":"lead","seat":0,"card":"9C"},{"type":"beat","seat":1,"card":"QS"}],"mode":"respond"}"#;

fn recorder() -> Recorder {
    Recorder { seen: vec![], kinds: vec![] }
}

#[test]
fn hello_is_answered_with_ready_asking_for_deltas() {
    let answer = Session::new().handle(&mut recorder(), HELLO).unwrap();
    let want = r#"{"type":"ready","protocol":1,"name":"recorder","observations":"delta"}"#;
    assert_eq!(answer.as_deref(), Some(want));
}

#[test]
fn a_request_is_answered_by_index_with_its_id() {
    let (mut bot, mut session) = (recorder(), Session::new());
    session.handle(&mut bot, HELLO).unwrap();
    let answer = session.handle(&mut bot, FULL).unwrap();
    assert_eq!(answer.as_deref(), Some(r#"{"type":"action","id":3,"index":1,"debug":"hand 2"}"#));
    assert_eq!(bot.kinds, vec!["pick_up"]);
}

#[test]
fn a_delta_rebuilds_the_whole_observation_exactly() {
    let (mut bot, mut session) = (recorder(), Session::new());
    session.handle(&mut bot, HELLO).unwrap();
    session.handle(&mut bot, FULL).unwrap();
    let answer = session.handle(&mut bot, DELTA).unwrap();
    assert_eq!(answer.as_deref(), Some(r#"{"type":"action","id":4,"index":0,"debug":"hand 1"}"#));
    assert_eq!(bot.seen[1], REBUILT);
    let deal_end = r#"{"type":"deal_end","deal":0,"delta":{"set":{"deal":1}}}"#;
    assert_eq!(session.handle(&mut bot, deal_end).unwrap(), None);
    assert_eq!(session.handle(&mut bot, r#"{"type":"news","x":[1,2.5,null]}"#).unwrap(), None);
    session.handle(&mut bot, r#"{"type":"shutdown"}"#).unwrap();
    assert!(session.finished);
}

#[test]
fn malformed_messages_are_refused_clearly() {
    let cases = [
        (r#"{"type":"hello","seat":"#, "malformed JSON: expected a value at byte 23, found the end"),
        ("{} x", "expected the end of the text at byte 3"),
        (r#"{"id":1}"#, "needs a string \"type\""),
        ("[1]", "must be a JSON object"),
        (r#"{"type":"hello","game":"svara"}"#, "a number \"seat\""),
    ];
    for (line, want) in cases {
        let error = Session::new().handle(&mut recorder(), line).unwrap_err();
        assert!(error.0.contains(want), "{}: got {}", line, error);
    }
    let mut session = Session::new();
    session.handle(&mut recorder(), HELLO).unwrap();
    assert!(session.handle(&mut recorder(), DELTA).unwrap_err().0.contains("appends to"));
}

#[test]
fn strings_and_numbers_round_trip() {
    let text = r#"{"s":"a\"b\\c\n\u00e9\ud83c\udca1","n":[0,-12,3.25,1e3,12345678901234567890]}"#;
    let parsed = Json::parse(text).unwrap();
    assert_eq!(parsed.get("s").unwrap().as_str(), Some("a\"b\\c\né🂡"));
    assert_eq!(parsed.to_string(), "{\"s\":\"a\\\"b\\\\c\\né🂡\",\"n\":[0,-12,3.25,1e3,12345678901234567890]}");
}

#[test]
fn cards() {
    assert_eq!(kozyri::rank("TH"), 10);
    assert!(kozyri::beats("6S", "AH", Some('S')) && !kozyri::beats("6S", "7S", Some('S')));
}
