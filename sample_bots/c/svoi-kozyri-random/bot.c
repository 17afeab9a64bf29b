/* A random Svoi Kozyri bot in plain C, with no JSON library.
 *
 * Each message is one line of JSON. Beyond that it relies on how the referee writes them
 * today, which the protocol does not promise: compact, with "type" as the first key and a
 * request's "id" before its observation (or delta). A bot meant to last should use a JSON
 * parser. An answer names the chosen action by its index in "legal_actions", so counting the
 * objects in that array is all the parsing this bot needs. It reads nothing of the
 * observation, so it asks for observations as deltas ("observations":"delta" in ready): each
 * request is then a few hundred bytes to scan instead of kilobytes.
 * Built by `build` in bot.toml; logs go to stderr, stdout carries only protocol lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

/* xorshift64*: small, fast and reproducible for a given seat. */
static uint64_t next_random(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* True if the message on this line has the given type (the referee writes "type" first). */
static int has_type(const char *line, const char *type) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "{\"type\":\"%s\"", type);
    return strncmp(line, prefix, strlen(prefix)) == 0;
}

/* The integer after the first occurrence of "key": in line, or fallback if it is absent. */
static long int_after(const char *line, const char *key, long fallback) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *found = strstr(line, pattern);
    return found ? strtol(found + strlen(pattern), NULL, 10) : fallback;
}

/* How many objects the "legal_actions" array holds (objects nested in them are not counted). */
static int count_legal_actions(const char *line) {
    const char *p = strstr(line, "\"legal_actions\":[");
    if (p == NULL) return 0;
    p += strlen("\"legal_actions\":[");
    int depth = 0, count = 0, in_string = 0;
    for (; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') in_string = 0;
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == '{' || *p == '[') {
            if (depth == 0 && *p == '{') count++;
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (depth == 0) break; /* the end of legal_actions itself */
            depth--;
        }
    }
    return count;
}

int main(void) {
    char *line = NULL;
    size_t size = 0;
    while (getline(&line, &size, stdin) > 0) {
        if (has_type(line, "hello")) {
            rng_state += (uint64_t)int_after(line, "seat", 0) * 0x100000001B3ULL;
            printf("{\"type\":\"ready\",\"protocol\":1,\"name\":\"random (C)\","
                   "\"observations\":\"delta\"}\n");
        } else if (has_type(line, "request")) {
            long id = int_after(line, "id", 0); /* the request's id precedes its observation */
            int choices = count_legal_actions(line);
            int index = choices > 0 ? (int)(next_random() % (uint64_t)choices) : 0;
            printf("{\"type\":\"action\",\"id\":%ld,\"index\":%d}\n", id, index);
        } else if (has_type(line, "shutdown")) {
            break;
        } else {
            continue; /* error, deal_end, match_end: information only */
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
