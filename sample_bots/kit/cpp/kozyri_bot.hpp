// Starter kit for Kozyri Arena bots in C++17 (header only, the standard library only).
//
// Derive from kozyri::Bot, implement choose(), and call kozyri::run(bot). The kit speaks
// protocol v1 for you: it answers hello with ready, turns every request into a call to
// choose() and sends the answer, and returns on shutdown or end of input. It asks the referee
// for observations as deltas and rebuilds the whole observation from them, so choose() sees
// exactly what the referee would send whole (set observations = "full" to get them whole).
// stdout belongs to the protocol: log with kozyri::log(), which writes to stderr.
//
//     #include "kozyri_bot.hpp"
//
//     struct First : kozyri::Bot {
//         std::size_t choose(const kozyri::Request& request) override { return 0; }
//     };
//
//     int main() { First bot; return kozyri::run(bot); }
//
// Build: g++ -std=c++17 -O2 -I"$KOZYRI_KIT/cpp" -o bot bot.cpp
#ifndef KOZYRI_BOT_HPP
#define KOZYRI_BOT_HPP

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kozyri {

constexpr int PROTOCOL_VERSION = 1;

/// A message from the referee that the kit cannot read.
class ProtocolError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

/// A JSON value: null, boolean, number, string, array or object (members in the order read).
class Json {
   public:
    enum class Type { Null, Bool, Number, String, Array, Object };

    Json() = default;
    static Json boolean(bool b) { Json j; j.type_ = Type::Bool; j.bool_ = b; return j; }
    static Json number(double n, std::string text) {
        Json j; j.type_ = Type::Number; j.number_ = n; j.text_ = std::move(text); return j;
    }
    static Json string(std::string s) { Json j; j.type_ = Type::String; j.text_ = std::move(s); return j; }
    static Json array() { Json j; j.type_ = Type::Array; return j; }
    static Json object() { Json j; j.type_ = Type::Object; return j; }

    /// Parse one whole JSON value; ProtocolError saying what and where if it is malformed.
    static Json parse(const std::string& text);

    Type type() const { return type_; }
    bool is_null() const { return type_ == Type::Null; }
    bool is_object() const { return type_ == Type::Object; }
    bool is_array() const { return type_ == Type::Array; }
    bool is_string() const { return type_ == Type::String; }
    bool is_number() const { return type_ == Type::Number; }

    bool as_bool(bool fallback = false) const { return type_ == Type::Bool ? bool_ : fallback; }
    double as_double(double fallback = 0) const { return type_ == Type::Number ? number_ : fallback; }
    long long as_int(long long fallback = 0) const {
        return type_ == Type::Number ? static_cast<long long>(number_) : fallback;
    }
    std::string as_string(const std::string& fallback = "") const {
        return type_ == Type::String ? text_ : fallback;
    }

    /// Items of an array, or values of an object (in order); keys() gives an object's keys.
    const std::vector<Json>& items() const { return items_; }
    const std::vector<std::string>& keys() const { return keys_; }
    std::size_t size() const { return items_.size(); }
    const Json& operator[](std::size_t index) const { return index < items_.size() ? items_[index] : none(); }
    const Json& operator[](int index) const { return index < 0 ? none() : (*this)[static_cast<std::size_t>(index)]; }

    /// The member `key` of an object; a null value if there is none.
    const Json& operator[](const std::string& key) const {
        const Json* found = find(key);
        return found ? *found : none();
    }
    const Json& operator[](const char* key) const { return (*this)[std::string(key)]; }
    bool contains(const std::string& key) const { return find(key) != nullptr; }

    const Json* find(const std::string& key) const {
        for (std::size_t i = 0; i < keys_.size(); i++)
            if (keys_[i] == key) return &items_[i];
        return nullptr;
    }

    /// Set member `key` of an object (kept in place if it exists, else added at the end).
    void set(const std::string& key, Json value) {
        for (std::size_t i = 0; i < keys_.size(); i++)
            if (keys_[i] == key) { items_[i] = std::move(value); return; }
        keys_.push_back(key);
        items_.push_back(std::move(value));
    }
    void erase(const std::string& key) {
        for (std::size_t i = 0; i < keys_.size(); i++)
            if (keys_[i] == key) {
                keys_.erase(keys_.begin() + static_cast<std::ptrdiff_t>(i));
                items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
                return;
            }
    }
    void push_back(Json value) { items_.push_back(std::move(value)); }
    Json* find_mutable(const std::string& key) {
        for (std::size_t i = 0; i < keys_.size(); i++)
            if (keys_[i] == key) return &items_[i];
        return nullptr;
    }

    /// The same JSON (member order aside; 1 and true differ).
    bool operator==(const Json& other) const {
        if (type_ != other.type_ || items_.size() != other.items_.size()) return false;
        switch (type_) {
            case Type::Null: return true;
            case Type::Bool: return bool_ == other.bool_;
            case Type::Number: return number_ == other.number_;
            case Type::String: return text_ == other.text_;
            case Type::Array: return items_ == other.items_;
            case Type::Object:
                for (std::size_t i = 0; i < keys_.size(); i++) {
                    const Json* theirs = other.find(keys_[i]);
                    if (!theirs || !(items_[i] == *theirs)) return false;
                }
                return true;
        }
        return false;
    }
    bool operator!=(const Json& other) const { return !(*this == other); }

    /// Compact JSON text.
    std::string dump() const {
        std::string out;
        write(out);
        return out;
    }

    static void write_string(std::string& out, const std::string& s) {
        out += '"';
        for (unsigned char c : s) {
            if (c == '"' || c == '\\') { out += '\\'; out += static_cast<char>(c); }
            else if (c < 0x20) {
                static const char* hex = "0123456789abcdef";
                out += "\\u00";
                out += hex[c >> 4];
                out += hex[c & 15];
            } else out += static_cast<char>(c);
        }
        out += '"';
    }

   private:
    static const Json& none() { static const Json null; return null; }

    void write(std::string& out) const {
        switch (type_) {
            case Type::Null: out += "null"; return;
            case Type::Bool: out += bool_ ? "true" : "false"; return;
            case Type::Number: out += text_; return;
            case Type::String: write_string(out, text_); return;
            case Type::Array:
            case Type::Object:
                out += type_ == Type::Array ? '[' : '{';
                for (std::size_t i = 0; i < items_.size(); i++) {
                    if (i) out += ',';
                    if (type_ == Type::Object) { write_string(out, keys_[i]); out += ':'; }
                    items_[i].write(out);
                }
                out += type_ == Type::Array ? ']' : '}';
        }
    }

    Type type_ = Type::Null;
    bool bool_ = false;
    double number_ = 0;
    std::string text_;  // a string's value, or a number's text as read
    std::vector<Json> items_;
    std::vector<std::string> keys_;
};

namespace detail {

class Parser {
   public:
    explicit Parser(const std::string& text) : text_(text) {}

    Json whole() {
        Json value = parse_value(0);
        space();
        if (at_ < text_.size()) fail("text after the value");
        return value;
    }

   private:
    [[noreturn]] void fail(const std::string& what) const {
        throw ProtocolError(what + " at byte " + std::to_string(at_));
    }
    char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
    void space() {
        while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) at_++;
    }
    void expect(char c, const char* what) {
        space();
        if (peek() != c) fail(what);
        at_++;
    }

    Json parse_value(int depth) {
        if (depth > 256) fail("nested too deep");
        space();
        char c = peek();
        if (c == '{') return parse_object(depth);
        if (c == '[') return parse_array(depth);
        if (c == '"') return Json::string(parse_string());
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
        if (word("true")) return Json::boolean(true);
        if (word("false")) return Json::boolean(false);
        if (word("null")) return Json();
        fail(c ? "unexpected character" : "unexpected end of input");
    }

    bool word(const char* w) {
        std::string s(w);
        if (text_.compare(at_, s.size(), s) != 0) return false;
        at_ += s.size();
        return true;
    }

    Json parse_object(int depth) {
        Json object = Json::object();
        at_++;
        space();
        if (peek() == '}') { at_++; return object; }
        for (;;) {
            space();
            if (peek() != '"') fail("expected a string key");
            std::string key = parse_string();
            expect(':', "expected ':'");
            object.set(key, parse_value(depth + 1));
            space();
            if (peek() == ',') { at_++; continue; }
            if (peek() == '}') { at_++; return object; }
            fail("expected ',' or '}'");
        }
    }

    Json parse_array(int depth) {
        Json array = Json::array();
        at_++;
        space();
        if (peek() == ']') { at_++; return array; }
        for (;;) {
            array.push_back(parse_value(depth + 1));
            space();
            if (peek() == ',') { at_++; continue; }
            if (peek() == ']') { at_++; return array; }
            fail("expected ',' or ']'");
        }
    }

    void digits() {
        if (peek() < '0' || peek() > '9') fail("bad number");
        while (peek() >= '0' && peek() <= '9') at_++;
    }

    Json parse_number() {
        std::size_t start = at_;
        if (peek() == '-') at_++;
        if (peek() == '0') at_++;
        else digits();
        if (peek() == '.') { at_++; digits(); }
        if (peek() == 'e' || peek() == 'E') {
            at_++;
            if (peek() == '+' || peek() == '-') at_++;
            digits();
        }
        std::string text = text_.substr(start, at_ - start);
        return Json::number(std::strtod(text.c_str(), nullptr), text);
    }

    unsigned hex4() {
        if (at_ + 4 > text_.size()) fail("bad \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; i++) {
            char c = text_[at_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
            else fail("bad \\u escape");
        }
        return v;
    }

    static void utf8(std::string& out, unsigned code) {
        if (code < 0x80) { out += static_cast<char>(code); return; }
        if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
        } else if (code < 0x10000) {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (code >> 18));
            out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        }
        out += static_cast<char>(0x80 | (code & 0x3F));
    }

    void escape(std::string& out) {
        char c = peek();
        at_++;
        switch (c) {
            case '"': out += '"'; return;
            case '\\': out += '\\'; return;
            case '/': out += '/'; return;
            case 'b': out += '\b'; return;
            case 'f': out += '\f'; return;
            case 'n': out += '\n'; return;
            case 'r': out += '\r'; return;
            case 't': out += '\t'; return;
            case 'u': break;
            default: fail("bad escape in a string");
        }
        unsigned code = hex4();
        if (code >= 0xD800 && code < 0xDC00 && text_.compare(at_, 2, "\\u") == 0) {
            std::size_t back = at_;
            at_ += 2;
            unsigned low = hex4();
            if (low >= 0xDC00 && low < 0xE000) code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            else at_ = back;
        }
        utf8(out, code);
    }

    std::string parse_string() {
        at_++;  // the opening quote
        std::string out;
        for (;;) {
            if (at_ >= text_.size()) fail("unterminated string");
            char c = text_[at_];
            if (c == '"') { at_++; return out; }
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c == '\\') { at_++; escape(out); }
            else { out += c; at_++; }
        }
    }

    const std::string& text_;
    std::size_t at_ = 0;
};

}  // namespace detail

inline Json Json::parse(const std::string& text) { return detail::Parser(text).whole(); }

/// Bring `observation` (an object, possibly empty) up to date with a protocol delta: keys in
/// "drop" go, keys in "set" take their new value, lists in "append" grow by the items given.
inline void apply_delta(Json& observation, const Json& delta) {
    if (!observation.is_object() || !delta.is_object()) throw ProtocolError("a delta that is not an object");
    for (const Json& key : delta["drop"].items()) observation.erase(key.as_string());
    const Json& set = delta["set"];
    for (std::size_t i = 0; i < set.keys().size(); i++) observation.set(set.keys()[i], set.items()[i]);
    const Json& append = delta["append"];
    for (std::size_t i = 0; i < append.keys().size(); i++) {
        Json* list = observation.find_mutable(append.keys()[i]);
        if (!list || !list->is_array()) throw ProtocolError("a delta appends to \"" + append.keys()[i] + "\", which is not a list");
        for (const Json& item : append.items()[i].items()) list->push_back(item);
    }
}

/// Write a line to stderr (the referee keeps it with the match log and the replay).
template <typename... Parts>
void log(const Parts&... parts) {
    std::ostringstream line;
    (line << ... << parts);
    std::cerr << line.str() << std::endl;
}

/// Rank of a card ("TH" -> 10; the ace is 14), 0 if it is not a card.
inline int rank(const std::string& card) {
    static const std::string ranks = "56789TJQKA";
    std::size_t at = card.empty() ? std::string::npos : ranks.find(card[0]);
    return at == std::string::npos ? 0 : static_cast<int>(at) + 5;
}
/// Suit letter of a card ("TH" -> 'H').
inline char suit(const std::string& card) { return card.size() > 1 ? card[1] : '\0'; }
/// Does `card` beat `top` for a player whose own trump suit is `trump` ('\0': none)?
inline bool beats(const std::string& card, const std::string& top, char trump) {
    if (suit(card) == suit(top)) return rank(card) > rank(top);
    return trump != '\0' && suit(card) == trump;
}

/// The start of the match.
struct Hello {
    std::string game;
    int players = 0;
    int seat = 0;
    Json params;
    Json json;  ///< the whole hello message
};

/// One legal action: its "type", its "card" ("" if it has none), and the whole object.
struct Action {
    std::string type;
    std::string card;
    Json json;
};

/// Your turn.
struct Request {
    long long id = 0;
    int deal = 0;
    std::string game;
    int seat = 0;
    std::vector<std::string> hand;     ///< your cards
    std::vector<Action> legal_actions; ///< never empty, in the referee's order
    Json observation;                  ///< the whole observation (rebuilt from deltas)
    long long time_left_ms = 0;
    long long move_ms = 0;
};

class Bot {
   public:
    virtual ~Bot() = default;
    std::string name;                ///< sent in ready (optional)
    std::string observations = "delta";  ///< "delta" (rebuilt by the kit) or "full"
    std::string debug;               ///< set in choose() to attach a note to the answer
    int seat = 0;

    /// Return an index into request.legal_actions.
    virtual std::size_t choose(const Request& request) = 0;
    virtual void on_hello(const Hello&) {}
    virtual void on_error(const Json& message) {
        log("referee: ", message["status"].as_string(), " ", message["message"].as_string());
    }
    /// A deal is over; `observation` is your view right after it.
    virtual void on_deal_end(const Json& /*message*/, const Json& /*observation*/) {}
    virtual void on_match_end(const Json& /*message*/) {}

    Json kept = Json::object();  ///< the kit's: the last whole observation
};

namespace detail {

inline void observe(Bot& bot, const Json& message) {
    if (message.contains("delta")) apply_delta(bot.kept, message["delta"]);
    else if (message["observation"].is_object()) bot.kept = message["observation"];
    else throw ProtocolError("no observation");
}

inline Request request_of(Bot& bot, const Json& message) {
    const Json& legal = message["legal_actions"];
    if (!legal.is_array() || legal.size() == 0) throw ProtocolError("no legal_actions");
    observe(bot, message);
    Request request;
    request.id = message["id"].as_int();
    request.deal = static_cast<int>(message["deal"].as_int());
    request.game = bot.kept["game"].as_string();
    request.seat = bot.seat;
    for (const Json& card : bot.kept["hand"].items()) request.hand.push_back(card.as_string());
    for (const Json& action : legal.items())
        request.legal_actions.push_back({action["type"].as_string(), action["card"].as_string(), action});
    request.observation = bot.kept;
    request.time_left_ms = message["time_left_ms"].as_int();
    request.move_ms = message["move_ms"].as_int();
    return request;
}

inline std::string ready(const Bot& bot) {
    std::string out = "{\"type\":\"ready\",\"protocol\":" + std::to_string(PROTOCOL_VERSION);
    if (!bot.name.empty()) { out += ",\"name\":"; Json::write_string(out, bot.name); }
    if (bot.observations != "full") { out += ",\"observations\":"; Json::write_string(out, bot.observations); }
    return out + "}";
}

inline std::string answer(Bot& bot, const Json& message) {
    Request request = request_of(bot, message);
    bot.debug.clear();
    std::size_t index = bot.choose(request);
    std::string out = "{\"type\":\"action\"";
    if (message.contains("id")) out += ",\"id\":" + message["id"].dump();
    out += ",\"index\":" + std::to_string(index);
    if (!bot.debug.empty()) { out += ",\"debug\":"; Json::write_string(out, bot.debug); }
    return out + "}";
}

inline Hello hello_of(const Json& message) {
    return {message["game"].as_string(), static_cast<int>(message["players"].as_int()),
            static_cast<int>(message["seat"].as_int()), message["params"], message};
}

}  // namespace detail

/// React to one message; the line to send ("" if none). False in `go_on` after shutdown.
inline std::string handle(Bot& bot, const Json& message, bool& go_on) {
    go_on = true;
    if (!message.is_object()) throw ProtocolError("not a JSON object");
    const std::string type = message["type"].as_string();
    if (type == "hello") {
        Hello hello = detail::hello_of(message);
        bot.seat = hello.seat;
        bot.on_hello(hello);
        return detail::ready(bot);
    }
    if (type == "request") return detail::answer(bot, message);
    if (type == "error") bot.on_error(message);
    else if (type == "deal_end") {
        detail::observe(bot, message);
        bot.on_deal_end(message, bot.kept);
    } else if (type == "match_end") bot.on_match_end(message);
    else if (type == "shutdown") go_on = false;
    else if (type.empty()) throw ProtocolError("no \"type\"");
    return "";
}

/// The protocol loop: 0 after shutdown or end of input, 1 (after saying why on stderr) when a
/// message from the referee is malformed.
inline int run(Bot& bot, std::istream& in = std::cin, std::ostream& out = std::cout) {
    std::string line;
    long number = 0;
    while (std::getline(in, line)) {
        number++;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        bool go_on = true;
        try {
            std::string reply = handle(bot, Json::parse(line), go_on);
            if (!reply.empty()) out << reply << '\n' << std::flush;
        } catch (const ProtocolError& error) {
            log("kozyri kit: malformed message from the referee (line ", number, "): ", error.what());
            return 1;
        }
        if (!go_on) break;
    }
    return 0;
}

}  // namespace kozyri

#endif
