// Starter kit for Kozyri Arena bots in Rust: one module file, the standard library only, for
// plain `rustc` (no cargo, no crates). Bring it into your bot with
//
//     #[allow(dead_code)]
//     mod kozyri {
//         include!(concat!(env!("KOZYRI_KIT"), "/rust/kozyri.rs"));
//     }
//
// (KOZYRI_KIT is set wherever a bot is built), implement `kozyri::Bot` (one method, `choose`)
// and call `kozyri::run(&mut bot)`. The kit speaks protocol v1: it answers hello with ready,
// turns every request into a call to `choose` and sends the answer, and returns on shutdown.
// It asks for observations as deltas and rebuilds each whole observation from them, key for
// key and value for value as the referee would send it (numbers keep their text); return
// "full" from `observations()` to be sent each one whole. stdout belongs to the protocol:
// log with `kozyri::log` or `eprintln!`, never `println!`. On the platform your bot is frozen
// between its turns: think inside `choose`.

use std::fmt;
use std::io::{self, BufRead, Write};

pub const PROTOCOL_VERSION: i64 = 1;

/// A JSON value. Objects keep their keys in the order read; numbers keep their text.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(String),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// A message the kit cannot use: malformed JSON, a missing or mistyped key.
#[derive(Clone, Debug, PartialEq)]
pub struct KitError(pub String);

impl fmt::Display for KitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Json {
    /// The value of `key` in an object (None if absent or not an object).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Number(n) => n.parse().ok(),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => n.parse().ok(),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Vec<Json>> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }
    /// Set `key` of an object: replaced where it stands, or added at the end.
    pub fn set(&mut self, key: &str, value: Json) {
        if let Json::Object(members) = self {
            match members.iter_mut().find(|(k, _)| k == key) {
                Some(member) => member.1 = value,
                None => members.push((key.to_string(), value)),
            }
        }
    }
    pub fn remove(&mut self, key: &str) {
        if let Json::Object(members) = self {
            members.retain(|(k, _)| k != key);
        }
    }
    /// Parse one whole JSON text.
    pub fn parse(text: &str) -> Result<Json, KitError> {
        let mut reader = Reader { bytes: text.as_bytes(), pos: 0 };
        reader.blanks();
        let value = reader.value(0)?;
        reader.blanks();
        if reader.pos != reader.bytes.len() {
            return Err(reader.error("the end of the text"));
        }
        Ok(value)
    }
}

impl fmt::Display for Json {
    /// Compact JSON on one line (every control character escaped).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{}", b),
            Json::Number(n) => f.write_str(n),
            Json::Str(s) => quote(f, s),
            Json::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}", item)?;
                }
                f.write_str("]")
            }
            Json::Object(members) => {
                f.write_str("{")?;
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    quote(f, key)?;
                    write!(f, ":{}", value)?;
                }
                f.write_str("}")
            }
        }
    }
}

fn quote(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            c if (c as u32) < 0x20 || c == '\u{7f}' => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{}", c)?,
        }
    }
    f.write_str("\"")
}

const MAX_DEPTH: usize = 512;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, expected: &str) -> KitError {
        let found = match self.bytes.get(self.pos) {
            Some(b) => format!("'{}'", *b as char),
            None => "the end".to_string(),
        };
        KitError(format!(
            "malformed JSON: expected {} at byte {}, found {}",
            expected, self.pos, found
        ))
    }
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }
    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }
    fn expect(&mut self, b: u8) -> Result<(), KitError> {
        if self.peek() != Some(b) {
            return Err(self.error(&format!("'{}'", b as char)));
        }
        self.pos += 1;
        Ok(())
    }
    fn value(&mut self, depth: usize) -> Result<Json, KitError> {
        if depth > MAX_DEPTH {
            return Err(KitError(format!("malformed JSON: nested more than {} deep", MAX_DEPTH)));
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("a value")),
        }
    }
    fn word(&mut self, word: &str, value: Json) -> Result<Json, KitError> {
        if !self.bytes[self.pos..].starts_with(word.as_bytes()) {
            return Err(self.error(word));
        }
        self.pos += word.len();
        Ok(value)
    }
    fn object(&mut self, depth: usize) -> Result<Json, KitError> {
        let mut members = Vec::new();
        self.pos += 1;
        self.blanks();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.blanks();
            if self.peek() != Some(b'"') {
                return Err(self.error("a key in quotes"));
            }
            let key = self.string()?;
            self.blanks();
            self.expect(b':')?;
            self.blanks();
            let value = self.value(depth + 1)?;
            members.retain(|(k, _): &(String, Json)| *k != key);
            members.push((key, value));
            self.blanks();
            if self.peek() == Some(b',') {
                self.pos += 1;
                continue;
            }
            self.expect(b'}')?;
            return Ok(Json::Object(members));
        }
    }
    fn array(&mut self, depth: usize) -> Result<Json, KitError> {
        let mut items = Vec::new();
        self.pos += 1;
        self.blanks();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.blanks();
            items.push(self.value(depth + 1)?);
            self.blanks();
            if self.peek() == Some(b',') {
                self.pos += 1;
                continue;
            }
            self.expect(b']')?;
            return Ok(Json::Array(items));
        }
    }
    fn string(&mut self) -> Result<String, KitError> {
        self.pos += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let b = match self.peek() {
                Some(b) => b,
                None => return Err(self.error("the closing quote")),
            };
            self.pos += 1;
            match b {
                b'"' => {
                    return String::from_utf8(out).map_err(|_| KitError("malformed JSON: a string is not UTF-8".into()))
                }
                b'\\' => self.escape(&mut out)?,
                b if b < 0x20 => {
                    self.pos -= 1;
                    return Err(self.error("no control character inside a string"));
                }
                b => out.push(b),
            }
        }
    }
    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), KitError> {
        let b = self.peek().ok_or_else(|| self.error("an escape"))?;
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode()?,
            _ => {
                self.pos -= 1;
                return Err(self.error("an escape (one of \"\\/bfnrtu)"));
            }
        };
        let mut buffer = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
        Ok(())
    }
    fn hex4(&mut self) -> Result<u32, KitError> {
        let digits = self.bytes.get(self.pos..self.pos + 4).ok_or_else(|| self.error("four hex digits"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("four hex digits"))?;
        let code = u32::from_str_radix(text, 16).map_err(|_| self.error("four hex digits"))?;
        self.pos += 4;
        Ok(code)
    }
    fn unicode(&mut self) -> Result<char, KitError> {
        let high = self.hex4()?;
        if (0xd800..0xdc00).contains(&high) && self.bytes[self.pos..].starts_with(b"\\u") {
            self.pos += 2;
            let low = self.hex4()?;
            let code = 0x10000 + ((high - 0xd800) << 10) + (low.wrapping_sub(0xdc00) & 0x3ff);
            return Ok(char::from_u32(code).unwrap_or('\u{fffd}'));
        }
        Ok(char::from_u32(high).unwrap_or('\u{fffd}'))
    }
    fn digits(&mut self) -> bool {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos > start
    }
    fn number(&mut self) -> Result<Json, KitError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else if !self.digits() {
            return Err(self.error("a digit"));
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !self.digits() {
                return Err(self.error("a digit after the point"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !self.digits() {
                return Err(self.error("a digit in the exponent"));
            }
        }
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("0");
        Ok(Json::Number(text.to_string()))
    }
}

/// The first message: which game, how many players, your seat; every key in `raw`.
#[derive(Clone, Debug)]
pub struct Hello {
    pub game: String,
    pub players: usize,
    pub seat: usize,
    pub raw: Json,
}

/// One legal action as sent: its type, its card if it has one, every key in `raw`.
#[derive(Clone, Debug)]
pub struct Action {
    pub kind: String,
    pub card: Option<String>,
    pub raw: Json,
}

/// Everything your seat may know, whole; typed getters for the keys every game has.
#[derive(Clone, Debug)]
pub struct Observation {
    pub raw: Json,
}

impl Observation {
    pub fn game(&self) -> &str {
        self.raw.get("game").and_then(Json::as_str).unwrap_or("")
    }
    pub fn seat(&self) -> usize {
        self.raw.get("seat").and_then(Json::as_i64).unwrap_or(0) as usize
    }
    /// Your cards, e.g. ["8S", "QS"].
    pub fn hand(&self) -> Vec<String> {
        strings(self.raw.get("hand"))
    }
    /// How many cards each seat holds.
    pub fn hand_counts(&self) -> Vec<i64> {
        let items = self.raw.get("hand_counts").and_then(Json::as_array);
        items.map(|v| v.iter().filter_map(Json::as_i64).collect()).unwrap_or_default()
    }
    /// The public events of the deal, each an object with a "type".
    pub fn history(&self) -> Vec<Json> {
        self.raw.get("history").and_then(Json::as_array).cloned().unwrap_or_default()
    }
    /// Any key, as parsed.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.raw.get(key)
    }
}

fn strings(value: Option<&Json>) -> Vec<String> {
    let items = value.and_then(Json::as_array);
    items.map(|v| v.iter().filter_map(|s| s.as_str().map(String::from)).collect()).unwrap_or_default()
}

/// Your turn: the whole observation, the legal actions (never empty), your clock.
#[derive(Clone, Debug)]
pub struct Request {
    pub id: Json,
    pub deal: i64,
    pub observation: Observation,
    pub legal: Vec<Action>,
    pub time_left_ms: i64,
    pub move_ms: i64,
    /// Set in `choose` to store a note with the move (up to 1,024 characters).
    pub debug: Option<String>,
}

/// A bot: `choose` is required, the rest is optional.
pub trait Bot {
    /// An index into `request.legal`.
    fn choose(&mut self, request: &mut Request) -> usize;
    /// Sent in ready; shown next to the manifest name.
    fn name(&self) -> Option<String> {
        None
    }
    /// "delta" (the kit rebuilds each observation) or "full".
    fn observations(&self) -> &str {
        "delta"
    }
    fn on_hello(&mut self, _hello: &Hello) {}
    /// The referee rejected an answer (timeout, illegal...) and played the default action.
    fn on_error(&mut self, message: &Json) {
        log(&format!("referee: {}", message));
    }
    /// A deal is over; `observation` is your view right after it.
    fn on_deal_end(&mut self, _observation: &Observation, _message: &Json) {}
    /// The match is over; `message.get("place")` is your place (1 is best).
    fn on_match_end(&mut self, _message: &Json) {}
}

/// Write one line to stderr (the referee keeps it with the match log and the replay).
pub fn log(text: &str) {
    eprintln!("{}", text);
}

/// Rank of a card: "TH" -> 10; the ace is 14.
pub fn rank(card: &str) -> u32 {
    "56789TJQKA".find(card.chars().next().unwrap_or('5')).unwrap_or(0) as u32 + 5
}

/// Suit of a card: "TH" -> 'H'.
pub fn suit(card: &str) -> char {
    card.chars().nth(1).unwrap_or('?')
}

/// Does `card` beat `top` for a player whose own trump suit is `trump`?
pub fn beats(card: &str, top: &str, trump: Option<char>) -> bool {
    if suit(card) == suit(top) {
        return rank(card) > rank(top);
    }
    trump == Some(suit(card))
}

/// Bring `observation` (the last one received, or `{}`) up to date with `delta`, in place:
/// keys in "drop" go, keys in "set" take their new value, lists in "append" grow.
pub fn apply_delta(observation: &mut Json, delta: &Json) -> Result<(), KitError> {
    if let Some(Json::Array(keys)) = delta.get("drop") {
        for key in keys.iter().filter_map(Json::as_str) {
            observation.remove(key);
        }
    }
    if let Some(Json::Object(members)) = delta.get("set") {
        for (key, value) in members {
            observation.set(key, value.clone());
        }
    }
    if let Some(Json::Object(members)) = delta.get("append") {
        for (key, items) in members {
            let grown = match (observation.get(key), items) {
                (Some(Json::Array(list)), Json::Array(new)) => {
                    let mut grown = list.clone();
                    grown.extend(new.iter().cloned());
                    grown
                }
                _ => return Err(KitError(format!("the delta appends to '{}', which is not a list", key))),
            };
            observation.set(key, Json::Array(grown));
        }
    }
    Ok(())
}

/// One match's state; `run` drives it, tests call `handle` directly.
pub struct Session {
    kept: Json,
    pub finished: bool,
}

impl Session {
    pub fn new() -> Session {
        Session { kept: Json::Object(Vec::new()), finished: false }
    }

    /// React to one line from the referee: the answer line to send, if any, or why the
    /// message cannot be used.
    pub fn handle(&mut self, bot: &mut dyn Bot, line: &str) -> Result<Option<String>, KitError> {
        let message = Json::parse(line)?;
        if !matches!(message, Json::Object(_)) {
            return Err(KitError(format!("a message must be a JSON object, got {}", line)));
        }
        let kind = message.get("type").and_then(Json::as_str);
        match kind.ok_or_else(|| KitError(format!("a message needs a string \"type\", got {}", line)))? {
            "hello" => return ready(bot, &message).map(Some),
            "request" => return self.answer(bot, &message).map(Some),
            "error" => bot.on_error(&message),
            "deal_end" => {
                let observation = self.observation(&message)?;
                bot.on_deal_end(&observation, &message);
            }
            "match_end" => bot.on_match_end(&message),
            "shutdown" => self.finished = true,
            _ => {} // later versions may add messages: ignore them
        }
        Ok(None)
    }

    fn observation(&mut self, message: &Json) -> Result<Observation, KitError> {
        match (message.get("delta"), message.get("observation")) {
            (Some(delta @ Json::Object(_)), _) => apply_delta(&mut self.kept, delta)?,
            (None, Some(whole @ Json::Object(_))) => self.kept = whole.clone(),
            _ => return Err(KitError("an \"observation\" or a \"delta\" object is needed".into())),
        }
        Ok(Observation { raw: self.kept.clone() })
    }

    fn answer(&mut self, bot: &mut dyn Bot, message: &Json) -> Result<String, KitError> {
        let observation = self.observation(message)?;
        let items = message.get("legal_actions").and_then(Json::as_array);
        let items = items.ok_or_else(|| KitError("a request needs a list \"legal_actions\"".into()))?;
        let mut legal = Vec::new();
        for raw in items {
            let kind = raw.get("type").and_then(Json::as_str);
            let kind = kind.ok_or_else(|| KitError(format!("a legal action needs a \"type\", got {}", raw)))?;
            let card = raw.get("card").and_then(Json::as_str).map(String::from);
            legal.push(Action { kind: kind.to_string(), card, raw: raw.clone() });
        }
        let number = |key: &str| message.get(key).and_then(Json::as_i64).unwrap_or(0);
        let mut request = Request {
            id: message.get("id").cloned().unwrap_or(Json::Null),
            deal: number("deal"),
            observation,
            legal,
            time_left_ms: number("time_left_ms"),
            move_ms: number("move_ms"),
            debug: None,
        };
        let index = bot.choose(&mut request);
        let mut reply = Json::Object(vec![("type".into(), Json::Str("action".into()))]);
        reply.set("id", request.id.clone());
        reply.set("index", Json::Number(index.to_string()));
        if let Some(debug) = request.debug.filter(|d| !d.is_empty()) {
            reply.set("debug", Json::Str(debug));
        }
        Ok(reply.to_string())
    }
}

fn ready(bot: &mut dyn Bot, message: &Json) -> Result<String, KitError> {
    let game = message.get("game").and_then(Json::as_str);
    let seat = message.get("seat").and_then(Json::as_i64);
    let (game, seat) = match (game, seat) {
        (Some(game), Some(seat)) => (game, seat),
        _ => return Err(KitError("hello needs a string \"game\" and a number \"seat\"".into())),
    };
    let players = message.get("players").and_then(Json::as_i64).unwrap_or(0);
    let hello = Hello { game: game.into(), players: players as usize, seat: seat as usize, raw: message.clone() };
    bot.on_hello(&hello);
    let mut ready = Json::Object(vec![("type".into(), Json::Str("ready".into()))]);
    ready.set("protocol", Json::Number(PROTOCOL_VERSION.to_string()));
    if let Some(name) = bot.name() {
        ready.set("name", Json::Str(name));
    }
    if bot.observations() != "full" {
        ready.set("observations", Json::Str(bot.observations().into()));
    }
    Ok(ready.to_string())
}

/// The protocol loop: one message per stdin line until shutdown or the end of input. A
/// malformed message ends the bot with status 2 and the reason on stderr.
pub fn run(bot: &mut dyn Bot) {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut session = Session::new();
    let mut line = String::new();
    while !session.finished {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => return,
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => {
                log(&format!("kozyri kit: stdin failed: {}", error));
                return;
            }
        }
        if line.trim().is_empty() {
            continue;
        }
        match session.handle(bot, line.trim_end()) {
            Ok(Some(answer)) => {
                let mut out = stdout.lock();
                let written = writeln!(out, "{}", answer).and_then(|_| out.flush());
                if written.is_err() {
                    return;
                }
            }
            Ok(None) => {}
            Err(error) => {
                log(&format!("kozyri kit: cannot read the referee's message: {}", error));
                std::process::exit(2);
            }
        }
    }
}
