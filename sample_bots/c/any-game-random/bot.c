/* Any game, random, in C: a uniformly random legal action in every game of the platform.
 *
 * The generator is seeded from the game and the seat, so the same match (same seed, same
 * bots) plays out the same way again. The kit (kozyri_bot.h) does the protocol.
 */
#include <stdint.h>
#include <stdio.h>

#include "kozyri_bot.h"

static uint64_t state;

/* splitmix64: small, and reproducible from its seed. */
static uint64_t next_random(void) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void on_hello(kz_bot *bot, const kz_hello *hello) {
    (void)bot;
    state = 1469598103934665603ULL; /* FNV-1a over "game/players/seat" */
    char text[128];
    snprintf(text, sizeof text, "%s/%d/%d", hello->game, hello->players, hello->seat);
    for (const char *c = text; *c; c++) state = (state ^ (unsigned char)*c) * 1099511628211ULL;
    kz_log("playing %s in seat %d of %d", hello->game, hello->seat, hello->players);
}

static int choose(kz_bot *bot, const kz_request *request) {
    int index = (int)(next_random() % request->action_count);
    snprintf(bot->debug, sizeof bot->debug, "%d of %zu", index + 1, request->action_count);
    return index;
}

int main(void) {
    kz_bot bot = {.name = "any-game-random-c", .choose = choose, .on_hello = on_hello};
    return kz_run(&bot);
}
