/* Starter kit for Kozyri Arena bots in C (C99, the standard library only).
 *
 * Fill in a kz_bot with your choose() function and call kz_run(&bot). The kit speaks protocol
 * v1 for you: it answers hello with ready, turns every request into a call to choose() and
 * sends the answer, and returns on shutdown or end of input. It asks the referee for
 * observations as deltas and rebuilds the whole observation from them, so choose() sees
 * exactly what the referee would send whole (set full_observations to be sent them whole).
 * stdout belongs to the protocol: log with kz_log(), which writes to stderr.
 *
 *     #include "kozyri_bot.h"
 *
 *     static int first(kz_bot *bot, const kz_request *request) { return 0; }
 *
 *     int main(void) {
 *         kz_bot bot = {.name = "first", .choose = first};
 *         return kz_run(&bot);
 *     }
 *
 * Build: gcc -O2 -I"$KOZYRI_KIT/c" -o bot bot.c "$KOZYRI_KIT/c/kozyri_bot.c"
 */
#ifndef KOZYRI_BOT_H
#define KOZYRI_BOT_H

#include <stddef.h>
#include <stdio.h>

#define KZ_PROTOCOL_VERSION 1

/* ---- JSON values: the kit's own small parser and writer ---------------------------------- */

typedef enum { KZ_NULL, KZ_BOOL, KZ_NUMBER, KZ_STRING, KZ_ARRAY, KZ_OBJECT } kz_type;

typedef struct kz_json kz_json;

/* A JSON value. An array holds `count` items; an object holds `count` items with their
 * `keys` (in the order read). A number keeps the text it was read from as well. */
struct kz_json {
    kz_type type;
    int boolean;
    double number;
    char *string; /* a string's value (UTF-8, NUL-terminated), or a number's text */
    size_t count;
    kz_json *items;
    char **keys;
};

/* Parse `text` (one whole JSON value). NULL on malformed input; then `error` (if given, of
 * `error_size` bytes) says what is wrong and where. Free the result with kz_json_free(). */
kz_json *kz_json_parse(const char *text, char *error, size_t error_size);
void kz_json_free(kz_json *value);
/* The member `key` of an object, or NULL (also when `object` is not an object). */
const kz_json *kz_get(const kz_json *object, const char *key);
/* Item `index` of an array, or NULL. */
const kz_json *kz_at(const kz_json *array, size_t index);
/* A string's text, or `fallback` when `value` is not a string. */
const char *kz_str(const kz_json *value, const char *fallback);
/* A number as a long, or `fallback` when `value` is not a number. */
long kz_int(const kz_json *value, long fallback);
/* True if the two values are the same JSON (member order aside; `1` and `true` differ). */
int kz_json_equal(const kz_json *a, const kz_json *b);
/* Write `value` as compact JSON. */
void kz_json_write(FILE *out, const kz_json *value);
/* Bring `observation` (an object, possibly empty) up to date with a protocol delta: keys in
 * "drop" go, keys in "set" take their new value, lists in "append" grow. 0 if it worked. */
int kz_apply_delta(kz_json *observation, const kz_json *delta);

/* ---- The typed view ---------------------------------------------------------------------- */

/* A card: "TH" is rank 10 of hearts; ranks 5..14 (the ace is 14), suits 'S' 'H' 'D' 'C'. */
int kz_rank(const char *card);
char kz_suit(const char *card);
/* Does `card` beat `top` for a player whose own trump suit is `trump` (0: none)? */
int kz_beats(const char *card, const char *top, char trump);

/* The start of the match (the hello message). */
typedef struct {
    const char *game;
    int players;
    int seat;
    const kz_json *params;
    const kz_json *json; /* the whole hello message */
} kz_hello;

/* One legal action: its "type", its "card" (NULL if it has none), and the whole object. */
typedef struct {
    const char *type;
    const char *card;
    const kz_json *json;
} kz_action;

/* Your turn. */
typedef struct {
    long id;
    int deal;
    const char *game;
    int seat;
    size_t hand_count;
    const char **hand;           /* your cards */
    size_t action_count;         /* never 0 */
    const kz_action *actions;    /* the legal actions, in the referee's order */
    const kz_json *observation;  /* the whole observation, rebuilt from deltas */
    long time_left_ms;
    long move_ms;
    const kz_json *json;         /* the whole request as received */
} kz_request;

typedef struct kz_bot kz_bot;

struct kz_bot {
    const char *name;      /* sent in ready (optional) */
    int full_observations; /* nonzero: ask for whole observations instead of deltas */
    /* Return an index into request->actions. Required. */
    int (*choose)(kz_bot *bot, const kz_request *request);
    /* Optional hooks; `message` is the whole message, its observation rebuilt for deal_end. */
    void (*on_hello)(kz_bot *bot, const kz_hello *hello);
    void (*on_error)(kz_bot *bot, const kz_json *message);
    void (*on_deal_end)(kz_bot *bot, const kz_json *message, const kz_json *observation);
    void (*on_match_end)(kz_bot *bot, const kz_json *message);
    void *user;            /* yours */
    char debug[1024];      /* set in choose() to attach a note to the answer */
    int seat;
    kz_json *kept;         /* the kit's: the last whole observation */
};

/* Write a formatted line to stderr (the referee keeps it with the match log and replay). */
void kz_log(const char *format, ...);

/* The protocol loop on stdin/stdout: 0 after shutdown or end of input, 1 (after saying why on
 * stderr) when a message from the referee is malformed. */
int kz_run(kz_bot *bot);
/* The same loop on any pair of streams (for tests). */
int kz_run_streams(kz_bot *bot, FILE *in, FILE *out);

#endif
