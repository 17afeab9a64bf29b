/* The Kozyri Arena C kit: a small JSON reader and writer, and the protocol loop.
 * See kozyri_bot.h for how to use it. */
#define _POSIX_C_SOURCE 200809L
#include "kozyri_bot.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KZ_MAX_DEPTH 256 /* deeper JSON is refused, not a stack overflow */

/* ---- memory ------------------------------------------------------------------------------ */

static void *kz_alloc(size_t size) {
    void *p = calloc(1, size ? size : 1);
    if (p == NULL) {
        fputs("kozyri kit: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

static void *kz_grow(void *p, size_t size) {
    void *q = realloc(p, size ? size : 1);
    if (q == NULL) {
        fputs("kozyri kit: out of memory\n", stderr);
        exit(1);
    }
    return q;
}

static char *kz_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *copy = kz_alloc(n);
    memcpy(copy, s, n);
    return copy;
}

static void kz_clear(kz_json *v) {
    if (v == NULL) return;
    for (size_t i = 0; i < v->count; i++) {
        kz_clear(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    memset(v, 0, sizeof *v);
}

void kz_json_free(kz_json *value) {
    kz_clear(value);
    free(value);
}

static void kz_copy(kz_json *to, const kz_json *from) {
    *to = *from;
    to->string = from->string ? kz_strdup(from->string) : NULL;
    to->items = from->count ? kz_alloc(from->count * sizeof *to->items) : NULL;
    to->keys = from->type == KZ_OBJECT ? kz_alloc((from->count + 1) * sizeof *to->keys) : NULL;
    for (size_t i = 0; i < from->count; i++) {
        kz_copy(&to->items[i], &from->items[i]);
        if (to->keys) to->keys[i] = kz_strdup(from->keys[i]);
    }
}

/* Room for one more item (and key) at the end of an array or object. */
static kz_json *kz_push(kz_json *v, const char *key) {
    v->items = kz_grow(v->items, (v->count + 1) * sizeof *v->items);
    memset(&v->items[v->count], 0, sizeof *v->items);
    if (v->type == KZ_OBJECT) {
        v->keys = kz_grow(v->keys, (v->count + 1) * sizeof *v->keys);
        v->keys[v->count] = kz_strdup(key);
    }
    return &v->items[v->count++];
}

/* ---- parsing ----------------------------------------------------------------------------- */

typedef struct {
    const char *text;
    const char *p;
    const char *error;
    int depth;
} kz_parser;

static int kz_fail(kz_parser *ps, const char *what) {
    if (ps->error == NULL) ps->error = what;
    return -1;
}

static void kz_space(kz_parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static int kz_hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

static size_t kz_utf8(unsigned code, char *out) {
    if (code < 0x80) {
        out[0] = (char)code;
        return 1;
    }
    if (code < 0x800) {
        out[0] = (char)(0xC0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xE0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code >> 18));
    out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code & 0x3F));
    return 4;
}

/* A \u escape at ps->p (after the backslash and 'u'), with its low surrogate if paired. */
static int kz_unicode(kz_parser *ps, unsigned *code) {
    if (kz_hex4(ps->p, code) != 0) return kz_fail(ps, "bad \\u escape");
    ps->p += 4;
    if (*code >= 0xD800 && *code < 0xDC00 && ps->p[0] == '\\' && ps->p[1] == 'u') {
        unsigned low;
        if (kz_hex4(ps->p + 2, &low) == 0 && low >= 0xDC00 && low < 0xE000) {
            *code = 0x10000 + ((*code - 0xD800) << 10) + (low - 0xDC00);
            ps->p += 6;
        }
    }
    return 0;
}

static int kz_escape(kz_parser *ps, char *out, size_t *n) {
    char c = *ps->p++;
    const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
    const char *at = c ? strchr(from, c) : NULL;
    if (at != NULL) {
        out[(*n)++] = to[at - from];
        return 0;
    }
    if (c != 'u') return kz_fail(ps, "bad escape in a string");
    unsigned code;
    if (kz_unicode(ps, &code) != 0) return -1;
    *n += kz_utf8(code, out + *n);
    return 0;
}

/* A string at ps->p (just after its opening quote); the result is malloc'ed. */
static char *kz_string(kz_parser *ps) {
    const char *end = ps->p;
    while (*end && *end != '"') end += (*end == '\\' && end[1]) ? 2 : 1;
    if (*end != '"') {
        kz_fail(ps, "unterminated string");
        return NULL;
    }
    char *out = kz_alloc((size_t)(end - ps->p) + 4);
    size_t n = 0;
    while (*ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) {
            free(out);
            kz_fail(ps, "control character in a string");
            return NULL;
        }
        if (c == '\\') {
            ps->p++;
            if (kz_escape(ps, out, &n) != 0) {
                free(out);
                return NULL;
            }
        } else {
            out[n++] = (char)c;
            ps->p++;
        }
    }
    ps->p++;
    out[n] = '\0';
    return out;
}

static int kz_digits(kz_parser *ps) {
    if (*ps->p < '0' || *ps->p > '9') return kz_fail(ps, "bad number");
    while (*ps->p >= '0' && *ps->p <= '9') ps->p++;
    return 0;
}

static int kz_number(kz_parser *ps, kz_json *v) {
    const char *start = ps->p;
    if (*ps->p == '-') ps->p++;
    if (*ps->p == '0') ps->p++;
    else if (kz_digits(ps) != 0) return -1;
    if (*ps->p == '.') {
        ps->p++;
        if (kz_digits(ps) != 0) return -1;
    }
    if (*ps->p == 'e' || *ps->p == 'E') {
        ps->p++;
        if (*ps->p == '+' || *ps->p == '-') ps->p++;
        if (kz_digits(ps) != 0) return -1;
    }
    size_t n = (size_t)(ps->p - start);
    v->type = KZ_NUMBER;
    v->string = kz_alloc(n + 1);
    memcpy(v->string, start, n);
    v->number = strtod(v->string, NULL);
    return 0;
}

static int kz_value(kz_parser *ps, kz_json *v);

static int kz_items(kz_parser *ps, kz_json *v, char close) {
    ps->p++;
    kz_space(ps);
    if (*ps->p == close) {
        ps->p++;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        if (close == '}') {
            if (*ps->p != '"') return kz_fail(ps, "expected a string key");
            ps->p++;
            if ((key = kz_string(ps)) == NULL) return -1;
            kz_space(ps);
            if (*ps->p != ':') {
                free(key);
                return kz_fail(ps, "expected ':'");
            }
            ps->p++;
        }
        kz_json *item = kz_push(v, key);
        free(key);
        if (kz_value(ps, item) != 0) return -1;
        kz_space(ps);
        if (*ps->p == ',') {
            ps->p++;
            kz_space(ps);
        } else if (*ps->p == close) {
            ps->p++;
            return 0;
        } else {
            return kz_fail(ps, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
}

static int kz_word(kz_parser *ps, const char *word) {
    size_t n = strlen(word);
    if (strncmp(ps->p, word, n) != 0) return kz_fail(ps, "unexpected character");
    ps->p += n;
    return 0;
}

static int kz_value(kz_parser *ps, kz_json *v) {
    kz_space(ps);
    char c = *ps->p;
    if (c == '{' || c == '[') {
        if (++ps->depth > KZ_MAX_DEPTH) return kz_fail(ps, "nested too deep");
        v->type = c == '{' ? KZ_OBJECT : KZ_ARRAY;
        int done = kz_items(ps, v, c == '{' ? '}' : ']');
        ps->depth--;
        return done;
    }
    if (c == '"') {
        ps->p++;
        v->type = KZ_STRING;
        return (v->string = kz_string(ps)) ? 0 : -1;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return kz_number(ps, v);
    if (c == 't' || c == 'f') {
        v->type = KZ_BOOL;
        v->boolean = c == 't';
        return kz_word(ps, c == 't' ? "true" : "false");
    }
    if (c == 'n') return kz_word(ps, "null");
    return kz_fail(ps, c ? "unexpected character" : "unexpected end of input");
}

kz_json *kz_json_parse(const char *text, char *error, size_t error_size) {
    kz_parser ps = {text, text, NULL, 0};
    kz_json *v = kz_alloc(sizeof *v);
    if (kz_value(&ps, v) == 0) {
        kz_space(&ps);
        if (*ps.p == '\0') return v;
        kz_fail(&ps, "text after the value");
    }
    if (error != NULL && error_size > 0)
        snprintf(error, error_size, "%s at byte %ld", ps.error, (long)(ps.p - text));
    kz_json_free(v);
    return NULL;
}

/* ---- reading values ---------------------------------------------------------------------- */

const kz_json *kz_get(const kz_json *object, const char *key) {
    if (object == NULL || object->type != KZ_OBJECT) return NULL;
    for (size_t i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0) return &object->items[i];
    return NULL;
}

const kz_json *kz_at(const kz_json *array, size_t index) {
    if (array == NULL || array->type != KZ_ARRAY || index >= array->count) return NULL;
    return &array->items[index];
}

const char *kz_str(const kz_json *value, const char *fallback) {
    return value != NULL && value->type == KZ_STRING ? value->string : fallback;
}

long kz_int(const kz_json *value, long fallback) {
    return value != NULL && value->type == KZ_NUMBER ? (long)value->number : fallback;
}

int kz_json_equal(const kz_json *a, const kz_json *b) {
    if (a->type != b->type || a->count != b->count) return 0;
    switch (a->type) {
    case KZ_NULL: return 1;
    case KZ_BOOL: return a->boolean == b->boolean;
    case KZ_NUMBER: return a->number == b->number;
    case KZ_STRING: return strcmp(a->string, b->string) == 0;
    case KZ_ARRAY:
        for (size_t i = 0; i < a->count; i++)
            if (!kz_json_equal(&a->items[i], &b->items[i])) return 0;
        return 1;
    case KZ_OBJECT:
        for (size_t i = 0; i < a->count; i++) {
            const kz_json *other = kz_get(b, a->keys[i]);
            if (other == NULL || !kz_json_equal(&a->items[i], other)) return 0;
        }
        return 1;
    }
    return 0;
}

/* ---- writing ----------------------------------------------------------------------------- */

static void kz_write_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

void kz_json_write(FILE *out, const kz_json *v) {
    switch (v->type) {
    case KZ_NULL: fputs("null", out); return;
    case KZ_BOOL: fputs(v->boolean ? "true" : "false", out); return;
    case KZ_NUMBER: fputs(v->string, out); return;
    case KZ_STRING: kz_write_string(out, v->string); return;
    case KZ_ARRAY:
    case KZ_OBJECT:
        fputc(v->type == KZ_ARRAY ? '[' : '{', out);
        for (size_t i = 0; i < v->count; i++) {
            if (i) fputc(',', out);
            if (v->keys) {
                kz_write_string(out, v->keys[i]);
                fputc(':', out);
            }
            kz_json_write(out, &v->items[i]);
        }
        fputc(v->type == KZ_ARRAY ? ']' : '}', out);
    }
}

/* ---- deltas ------------------------------------------------------------------------------ */

static void kz_drop(kz_json *object, const char *key) {
    for (size_t i = 0; i < object->count; i++) {
        if (strcmp(object->keys[i], key) != 0) continue;
        kz_clear(&object->items[i]);
        free(object->keys[i]);
        size_t rest = object->count - i - 1;
        memmove(&object->items[i], &object->items[i + 1], rest * sizeof *object->items);
        memmove(&object->keys[i], &object->keys[i + 1], rest * sizeof *object->keys);
        object->count--;
        return;
    }
}

static void kz_set(kz_json *object, const char *key, const kz_json *value) {
    kz_json *slot = (kz_json *)kz_get(object, key);
    if (slot != NULL) kz_clear(slot);
    else slot = kz_push(object, key);
    kz_copy(slot, value);
}

int kz_apply_delta(kz_json *observation, const kz_json *delta) {
    if (observation->type != KZ_OBJECT || delta->type != KZ_OBJECT) return -1;
    const kz_json *drop = kz_get(delta, "drop"), *set = kz_get(delta, "set");
    const kz_json *append = kz_get(delta, "append");
    for (size_t i = 0; drop && i < drop->count; i++)
        if (drop->items[i].type == KZ_STRING) kz_drop(observation, drop->items[i].string);
    for (size_t i = 0; set && set->type == KZ_OBJECT && i < set->count; i++)
        kz_set(observation, set->keys[i], &set->items[i]);
    for (size_t i = 0; append && append->type == KZ_OBJECT && i < append->count; i++) {
        kz_json *list = (kz_json *)kz_get(observation, append->keys[i]);
        const kz_json *items = &append->items[i];
        if (list == NULL || list->type != KZ_ARRAY || items->type != KZ_ARRAY) return -1;
        for (size_t j = 0; j < items->count; j++) kz_copy(kz_push(list, NULL), &items->items[j]);
    }
    return 0;
}

/* ---- cards ------------------------------------------------------------------------------- */

int kz_rank(const char *card) {
    const char *at = card && card[0] ? strchr("56789TJQKA", card[0]) : NULL;
    return at ? (int)(at - "56789TJQKA") + 5 : 0;
}

char kz_suit(const char *card) { return card && card[0] ? card[1] : '\0'; }

int kz_beats(const char *card, const char *top, char trump) {
    if (kz_suit(card) == kz_suit(top)) return kz_rank(card) > kz_rank(top);
    return trump != '\0' && kz_suit(card) == trump;
}

void kz_log(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    fflush(stderr);
}

/* ---- the protocol loop ------------------------------------------------------------------- */

static const char *kz_need_observation(kz_bot *bot, const kz_json *message) {
    const kz_json *delta = kz_get(message, "delta"), *whole = kz_get(message, "observation");
    if (bot->kept == NULL) {
        bot->kept = kz_alloc(sizeof *bot->kept);
        bot->kept->type = KZ_OBJECT;
    }
    if (delta != NULL) return kz_apply_delta(bot->kept, delta) == 0 ? NULL : "a delta that does not fit";
    if (whole == NULL || whole->type != KZ_OBJECT) return "no observation";
    kz_clear(bot->kept);
    kz_copy(bot->kept, whole);
    return NULL;
}

static void kz_send_ready(kz_bot *bot, FILE *out) {
    fprintf(out, "{\"type\":\"ready\",\"protocol\":%d", KZ_PROTOCOL_VERSION);
    if (bot->name) {
        fputs(",\"name\":", out);
        kz_write_string(out, bot->name);
    }
    if (!bot->full_observations) fputs(",\"observations\":\"delta\"", out);
    fputs("}\n", out);
    fflush(out);
}

static const char *kz_hello_message(kz_bot *bot, const kz_json *message, FILE *out) {
    kz_hello hello = {kz_str(kz_get(message, "game"), ""), (int)kz_int(kz_get(message, "players"), 0),
                      (int)kz_int(kz_get(message, "seat"), 0), kz_get(message, "params"), message};
    bot->seat = hello.seat;
    if (bot->on_hello) bot->on_hello(bot, &hello);
    kz_send_ready(bot, out);
    return NULL;
}

static void kz_send_action(kz_bot *bot, const kz_json *id, int index, FILE *out) {
    fputs("{\"type\":\"action\"", out);
    if (id != NULL) {
        fputs(",\"id\":", out);
        kz_json_write(out, id);
    }
    fprintf(out, ",\"index\":%d", index);
    if (bot->debug[0]) {
        fputs(",\"debug\":", out);
        kz_write_string(out, bot->debug);
    }
    fputs("}\n", out);
    fflush(out);
}

static const char *kz_request_message(kz_bot *bot, const kz_json *message, FILE *out) {
    const kz_json *legal = kz_get(message, "legal_actions");
    if (legal == NULL || legal->type != KZ_ARRAY || legal->count == 0) return "no legal_actions";
    const char *problem = kz_need_observation(bot, message);
    if (problem) return problem;
    const kz_json *hand = kz_get(bot->kept, "hand");
    size_t hand_count = hand && hand->type == KZ_ARRAY ? hand->count : 0;
    const char **cards = kz_alloc((hand_count + 1) * sizeof *cards);
    for (size_t i = 0; i < hand_count; i++) cards[i] = kz_str(&hand->items[i], "");
    kz_action *actions = kz_alloc(legal->count * sizeof *actions);
    for (size_t i = 0; i < legal->count; i++) {
        actions[i].json = &legal->items[i];
        actions[i].type = kz_str(kz_get(&legal->items[i], "type"), "");
        actions[i].card = kz_str(kz_get(&legal->items[i], "card"), NULL);
    }
    kz_request request = {kz_int(kz_get(message, "id"), 0), (int)kz_int(kz_get(message, "deal"), 0),
                          kz_str(kz_get(bot->kept, "game"), ""), bot->seat, hand_count, cards,
                          legal->count, actions, bot->kept,
                          kz_int(kz_get(message, "time_left_ms"), 0),
                          kz_int(kz_get(message, "move_ms"), 0), message};
    bot->debug[0] = '\0';
    int index = bot->choose(bot, &request);
    kz_send_action(bot, kz_get(message, "id"), index, out);
    free(cards);
    free(actions);
    return NULL;
}

/* React to one message; 1 to go on, 0 to stop, and *problem set if it is malformed. */
static int kz_handle(kz_bot *bot, const kz_json *message, FILE *out, const char **problem) {
    const char *type = kz_str(kz_get(message, "type"), NULL);
    *problem = NULL;
    if (type == NULL) *problem = "no \"type\"";
    else if (strcmp(type, "hello") == 0) *problem = kz_hello_message(bot, message, out);
    else if (strcmp(type, "request") == 0) *problem = kz_request_message(bot, message, out);
    else if (strcmp(type, "error") == 0) {
        if (bot->on_error) bot->on_error(bot, message);
        else kz_log("referee: %s %s", kz_str(kz_get(message, "status"), "?"),
                    kz_str(kz_get(message, "message"), ""));
    } else if (strcmp(type, "deal_end") == 0) {
        *problem = kz_need_observation(bot, message);
        if (*problem == NULL && bot->on_deal_end) bot->on_deal_end(bot, message, bot->kept);
    } else if (strcmp(type, "match_end") == 0) {
        if (bot->on_match_end) bot->on_match_end(bot, message);
    } else if (strcmp(type, "shutdown") == 0) return 0;
    return *problem == NULL;
}

static int kz_blank(const char *line) {
    for (; *line; line++)
        if (*line != ' ' && *line != '\t' && *line != '\r' && *line != '\n') return 0;
    return 1;
}

int kz_run_streams(kz_bot *bot, FILE *in, FILE *out) {
    char *line = NULL, error[160];
    size_t size = 0;
    long number = 0;
    int status = 0;
    while (getline(&line, &size, in) > 0) {
        number++;
        if (kz_blank(line)) continue;
        const char *problem = NULL;
        kz_json *message = kz_json_parse(line, error, sizeof error);
        int go_on = 0;
        if (message == NULL) problem = error;
        else if (message->type != KZ_OBJECT) problem = "not a JSON object";
        else go_on = kz_handle(bot, message, out, &problem);
        kz_json_free(message);
        if (problem != NULL) {
            kz_log("kozyri kit: malformed message from the referee (line %ld): %s", number, problem);
            status = 1;
        }
        if (!go_on) break;
    }
    free(line);
    kz_json_free(bot->kept);
    bot->kept = NULL;
    return status;
}

int kz_run(kz_bot *bot) { return kz_run_streams(bot, stdin, stdout); }
