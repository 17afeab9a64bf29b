// Unit tests of the C++ kit: parsing, answering, delta rebuilds, malformed input.
//
//     g++ -std=c++17 -Wall -I.. -o test_kit test_kit.cpp && ./test_kit [DELTAS]
//
// DELTAS (optional) is a file of JSON lines {"delta": ...}, deltas as the referee sends them,
// some with "full": the observation rebuilt by then ({"reset": true} starts a new sequence). Prints "ok" and exits 0 when every check passes.
#undef NDEBUG
#include <cassert>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "kozyri_bot.hpp"

using kozyri::Json;

static void test_values() {
    Json v = Json::parse(R"( {"a": [1, -2.5e3, true, null], "s": "\u0416\ud83c\udca1\n\""} )");
    assert(v["a"][0].as_int() == 1 && v["a"][1].as_double() == -2500.0);
    assert(v["a"][2].as_bool() && v["a"][3].is_null() && v["missing"]["deeper"].is_null());
    assert(v["s"].as_string() == "\xD0\x96\xF0\x9F\x82\xA1\n\"");
    assert(v.dump() == "{\"a\":[1,-2.5e3,true,null],\"s\":\"\xD0\x96\xF0\x9F\x82\xA1\\u000a\\\"\"}");
    assert(Json::parse(v.dump()) == v);
    assert(Json::parse(R"({"s":"x","a":[true,-2.5e3,true,null]})") != v);  // 1 and true differ
    assert(Json::parse(R"({"x":1,"y":2})") == Json::parse(R"({"y":2,"x":1})"));
    assert(kozyri::rank("TH") == 10 && kozyri::rank("AS") == 14 && kozyri::suit("TH") == 'H');
    assert(kozyri::beats("QH", "TH", 'S') && kozyri::beats("6S", "AH", 'S') && !kozyri::beats("6D", "AH", 'S'));
}

static void test_malformed_values() {
    for (const char* bad : {"{", "{\"a\" 1}", "[1,]", "tru", "\"\\x\"", "01", "{} x", "", "\"a\nb\""}) {
        try {
            Json::parse(bad);
            assert(!"parsed malformed JSON");
        } catch (const kozyri::ProtocolError& error) {
            assert(std::string(error.what()).find(" at byte ") != std::string::npos);
        }
    }
    try {
        Json::parse(std::string(2000, '['));
        assert(!"parsed JSON nested too deep");
    } catch (const kozyri::ProtocolError& error) {
        assert(std::string(error.what()).find("too deep") != std::string::npos);
    }
}

struct Recorder : kozyri::Bot {
    int requests = 0, deal_ends = 0;
    std::vector<std::string> hand;

    Recorder() { name = "t\xC3\xA9st"; }
    std::size_t choose(const kozyri::Request& request) override {
        requests++;
        hand = request.hand;
        assert(request.seat == 1 && request.game == "svoi-kozyri");
        assert(request.legal_actions[0].type == "beat" && request.legal_actions[0].card == "8H");
        assert(request.legal_actions.back().card.empty());
        debug = "say \"hi\"";
        return request.legal_actions.size() - 1;
    }
    void on_deal_end(const Json&, const Json& observation) override {
        deal_ends++;
        assert(observation["deal"].as_int() == 1 && !observation.contains("pile"));
    }
};

static void test_conversation() {
    std::istringstream in(
        R"({"type":"hello","protocol":1,"game":"svoi-kozyri","players":3,"seat":1})" "\n\n"
        R"({"type":"request","id":7,"deal":0,"observation":{"game":"svoi-kozyri","deal":0,"hand":["8H","TD"],"pile":[]},"legal_actions":[{"type":"beat","card":"8H"},{"type":"pick_up"}]})" "\n"
        R"({"type":"error","id":7,"status":"timeout","message":"late"})" "\n"
        R"({"type":"request","id":8,"deal":0,"delta":{"set":{"hand":["TD","9S","AC"]},"append":{"pile":["8H"]}},"legal_actions":[{"type":"beat","card":"8H"},{"type":"pick_up"}]})" "\n"
        R"({"type":"deal_end","deal":0,"delta":{"set":{"deal":1},"drop":["pile"]}})" "\n"
        R"({"type":"match_end","place":1})" "\n"
        R"({"type":"shutdown"})" "\n"
        R"({"type":"request","never":"read"})" "\n");
    std::ostringstream out;
    Recorder bot;
    assert(kozyri::run(bot, in, out) == 0);
    const std::string expected =
        "{\"type\":\"ready\",\"protocol\":1,\"name\":\"t\xC3\xA9st\",\"observations\":\"delta\"}\n"
        "{\"type\":\"action\",\"id\":7,\"index\":1,\"debug\":\"say \\\"hi\\\"\"}\n"
        "{\"type\":\"action\",\"id\":8,\"index\":1,\"debug\":\"say \\\"hi\\\"\"}\n";
    if (out.str() != expected) std::cerr << "got:\n" << out.str();
    assert(out.str() == expected);
    assert(bot.requests == 2 && bot.deal_ends == 1);
    assert((bot.hand == std::vector<std::string>{"TD", "9S", "AC"}));
}

struct First : kozyri::Bot {
    std::size_t choose(const kozyri::Request&) override { return 0; }
};

static void test_malformed_messages() {
    for (const char* input : {
             "{\"type\":\"hello\",\"seat\":0}\n{\"type\":\"request\",\"id\":1,\"legal_actions\":[{}],\"observ\n",
             "[1,2]\n",
             "{\"type\":\"request\",\"id\":1,\"observation\":{}}\n",
             "{\"type\":\"request\",\"id\":1,\"delta\":{\"append\":{\"pile\":[\"8H\"]}},\"legal_actions\":[{}]}\n",
         }) {
        std::istringstream in(input);
        std::ostringstream out;
        First bot;
        assert(kozyri::run(bot, in, out) == 1);
        assert(out.str().find("\"type\":\"action\"") == std::string::npos);
    }
}

// Rebuild each observation of the file from its delta and compare it with the whole one.
static long test_deltas(const char* path) {
    std::ifstream in(path);
    assert(in);
    std::string line;
    long checked = 0;
    Json kept = Json::object();
    while (std::getline(in, line)) {
        Json entry = Json::parse(line);
        if (entry.contains("reset")) {
            kept = Json::object();
            continue;
        }
        kozyri::apply_delta(kept, entry["delta"]);
        if (!entry.contains("full")) continue;
        if (kept != entry["full"]) std::cerr << "rebuilt " << checked << " differs:\n" << kept.dump() << "\n";
        assert(kept == entry["full"]);
        checked++;
    }
    assert(checked > 0);
    return checked;
}

int main(int argc, char** argv) {
    test_values();
    test_malformed_values();
    test_conversation();
    test_malformed_messages();
    long rebuilt = argc > 1 ? test_deltas(argv[1]) : 0;
    std::cout << "ok (" << rebuilt << " observations rebuilt)" << std::endl;
    return 0;
}
