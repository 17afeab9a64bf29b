/* Unit tests of the C kit: parsing, answering, delta rebuilds, malformed input.
 *
 *     gcc -std=c99 -Wall -I.. -o test_kit test_kit.c ../kozyri_bot.c && ./test_kit [DELTAS]
 *
 * DELTAS (optional) is a file of JSON lines {"delta": ...}, deltas as the referee sends them,
 * some with "full": the observation rebuilt by then ({"reset": true} starts a new sequence). Prints "ok" and exits 0 when every check passes. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kozyri_bot.h"

static kz_json *parse(const char *text) {
    char error[160];
    kz_json *v = kz_json_parse(text, error, sizeof error);
    if (v == NULL) fprintf(stderr, "parse failed: %s: %s\n", error, text);
    assert(v != NULL);
    return v;
}

static char *written(const kz_json *v) {
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    kz_json_write(out, v);
    fclose(out);
    return text;
}

static void test_values(void) {
    kz_json *v = parse(" {\"a\": [1, -2.5e3, true, null], \"s\": \"\\u0416\\ud83c\\udca1\\n\\\"\"} ");
    assert(kz_int(kz_at(kz_get(v, "a"), 0), 0) == 1);
    assert(kz_get(v, "a")->items[1].number == -2500.0);
    assert(kz_at(kz_get(v, "a"), 2)->type == KZ_BOOL);
    assert(kz_at(kz_get(v, "a"), 3)->type == KZ_NULL);
    assert(strcmp(kz_str(kz_get(v, "s"), ""), "\xD0\x96\xF0\x9F\x82\xA1\n\"") == 0);
    char *text = written(v);
    assert(strcmp(text, "{\"a\":[1,-2.5e3,true,null],\"s\":\"\xD0\x96\xF0\x9F\x82\xA1\\u000a\\\"\"}") == 0);
    kz_json *again = parse(text);
    assert(kz_json_equal(v, again));
    kz_json *other = parse("{\"s\":\"x\",\"a\":[true,-2.5e3,true,null]}");
    assert(!kz_json_equal(v, other)); /* 1 and true differ */
    free(text);
    kz_json_free(v);
    kz_json_free(again);
    kz_json_free(other);
    assert(kz_rank("TH") == 10 && kz_rank("AS") == 14 && kz_suit("TH") == 'H');
    assert(kz_beats("QH", "TH", 'S') && kz_beats("6S", "AH", 'S') && !kz_beats("6D", "AH", 'S'));
}

static void test_malformed_values(void) {
    const char *bad[] = {"{", "{\"a\" 1}", "[1,]", "tru", "\"\\x\"", "01", "{} x", "", "\"a\nb\""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char error[160] = "";
        assert(kz_json_parse(bad[i], error, sizeof error) == NULL);
        assert(strstr(error, " at byte ") != NULL);
    }
    char deep[2000];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    char error[160];
    assert(kz_json_parse(deep, error, sizeof error) == NULL && strstr(error, "too deep"));
}

typedef struct {
    int requests;
    char seen_hand[64];
    long seen_count;
    int deal_ends;
} record;

static int choose_last(kz_bot *bot, const kz_request *request) {
    record *r = bot->user;
    r->requests++;
    snprintf(r->seen_hand, sizeof r->seen_hand, "%s", request->hand_count ? request->hand[0] : "");
    r->seen_count = (long)request->hand_count;
    assert(request->seat == 1 && strcmp(request->game, "svoi-kozyri") == 0);
    assert(strcmp(request->actions[0].type, "beat") == 0 && strcmp(request->actions[0].card, "8H") == 0);
    assert(request->actions[request->action_count - 1].card == NULL);
    snprintf(bot->debug, sizeof bot->debug, "say \"hi\"");
    return (int)request->action_count - 1;
}

static void on_deal_end(kz_bot *bot, const kz_json *message, const kz_json *observation) {
    (void)message;
    record *r = bot->user;
    r->deal_ends++;
    assert(kz_int(kz_get(observation, "deal"), -1) == 1);
}

static char *conversation(kz_bot *bot, const char *input, int *status) {
    FILE *in = fmemopen((void *)input, strlen(input), "r");
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    *status = kz_run_streams(bot, in, out);
    fclose(in);
    fclose(out);
    return text;
}

static void test_conversation(void) {
    record r = {0};
    kz_bot bot = {.name = "t\xC3\xA9st", .choose = choose_last, .on_deal_end = on_deal_end, .user = &r};
    const char *input =
        "{\"type\":\"hello\",\"protocol\":1,\"game\":\"svoi-kozyri\",\"players\":3,\"seat\":1}\n"
        "\n"
        "{\"type\":\"request\",\"id\":7,\"deal\":0,\"observation\":{\"game\":\"svoi-kozyri\","
        "\"deal\":0,\"hand\":[\"8H\",\"TD\"],\"pile\":[]},"
        "\"legal_actions\":[{\"type\":\"beat\",\"card\":\"8H\"},{\"type\":\"pick_up\"}]}\n"
        "{\"type\":\"error\",\"id\":7,\"status\":\"timeout\",\"message\":\"late\"}\n"
        "{\"type\":\"request\",\"id\":8,\"deal\":0,\"delta\":{\"set\":{\"hand\":[\"TD\",\"9S\",\"AC\"]},"
        "\"append\":{\"pile\":[\"8H\"]}},"
        "\"legal_actions\":[{\"type\":\"beat\",\"card\":\"8H\"},{\"type\":\"pick_up\"}]}\n"
        "{\"type\":\"deal_end\",\"deal\":0,\"delta\":{\"set\":{\"deal\":1},\"drop\":[\"pile\"]}}\n"
        "{\"type\":\"match_end\",\"place\":1}\n"
        "{\"type\":\"shutdown\"}\n"
        "{\"type\":\"request\",\"never\":\"read\"}\n";
    int status;
    char *out = conversation(&bot, input, &status);
    const char *expected =
        "{\"type\":\"ready\",\"protocol\":1,\"name\":\"t\xC3\xA9st\",\"observations\":\"delta\"}\n"
        "{\"type\":\"action\",\"id\":7,\"index\":1,\"debug\":\"say \\\"hi\\\"\"}\n"
        "{\"type\":\"action\",\"id\":8,\"index\":1,\"debug\":\"say \\\"hi\\\"\"}\n";
    if (strcmp(out, expected) != 0) fprintf(stderr, "got:\n%s", out);
    assert(strcmp(out, expected) == 0);
    assert(status == 0 && r.requests == 2 && r.deal_ends == 1);
    assert(strcmp(r.seen_hand, "TD") == 0 && r.seen_count == 3);
    free(out);
}

static int choose_first(kz_bot *bot, const kz_request *request) {
    (void)bot;
    (void)request;
    return 0;
}

static void test_malformed_messages(void) {
    const char *inputs[] = {
        "{\"type\":\"hello\",\"seat\":0}\n{\"type\":\"request\",\"id\":1,\"legal_actions\":[{}],\"observ\n",
        "[1,2]\n",
        "{\"type\":\"request\",\"id\":1,\"observation\":{}}\n",
        "{\"type\":\"request\",\"id\":1,\"delta\":{\"append\":{\"pile\":[\"8H\"]}},\"legal_actions\":[{}]}\n",
    };
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        kz_bot bot = {.choose = choose_first, .full_observations = 1};
        int status;
        char *out = conversation(&bot, inputs[i], &status);
        assert(status == 1);
        assert(strstr(out, "\"type\":\"action\"") == NULL);
        free(out);
    }
}

/* Rebuild each observation of the file from its delta and compare it with the whole one. */
static long test_deltas(const char *path) {
    FILE *in = fopen(path, "r");
    assert(in != NULL);
    char *line = NULL;
    size_t size = 0;
    long checked = 0;
    kz_json *kept = parse("{}");
    while (getline(&line, &size, in) > 0) {
        kz_json *entry = parse(line);
        if (kz_get(entry, "reset")) {
            kz_json_free(kept);
            kept = parse("{}");
        } else {
            assert(kz_apply_delta(kept, kz_get(entry, "delta")) == 0);
        }
        if (kz_get(entry, "full") != NULL) {
            if (!kz_json_equal(kept, kz_get(entry, "full"))) {
                fprintf(stderr, "rebuilt %ld differs:\n", checked);
                kz_json_write(stderr, kept);
                fputc('\n', stderr);
            }
            assert(kz_json_equal(kept, kz_get(entry, "full")));
            checked++;
        }
        kz_json_free(entry);
    }
    kz_json_free(kept);
    free(line);
    fclose(in);
    assert(checked > 0);
    return checked;
}

int main(int argc, char **argv) {
    test_values();
    test_malformed_values();
    test_conversation();
    test_malformed_messages();
    long rebuilt = argc > 1 ? test_deltas(argv[1]) : 0;
    printf("ok (%ld observations rebuilt)\n", rebuilt);
    return 0;
}
