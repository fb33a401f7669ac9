/*
 * attn_suggest.h — "did you mean": the known name closest to a mistyped one, for the messages
 * that refuse an unknown kind, dataset, command, option or parameter. One helper used by all.
 *
 *   attn_suggest s = attn_suggest_start(typed);
 *   for (each known name) attn_suggest_offer(&s, name);
 *   attn_fail(..., "unknown kind '%s' (%s)", typed, attn_suggest_hint(&s, "see bench list", buf,
 *             sizeof buf));   -> "unknown kind 'windw' (did you mean 'window'?)"
 */
#ifndef ATTN_SUGGEST_H
#define ATTN_SUGGEST_H

#include <stddef.h>

/* The optimal-string-alignment distance (Damerau-Levenshtein without re-editing a substring):
 * insertions, deletions, substitutions and swaps of two adjacent characters, 1 each, comparing
 * ASCII letters without case. Names longer than 63 characters count as far from everything. */
int attn_edit_distance(const char *a, const char *b);

/* The largest distance still suggested for a typed word of len characters (leading dashes not
 * counted): 1 up to 4 characters, 2 up to 8, then 3 (so "xyz" gets no suggestion of "mqa",
 * "windw" gets "window"). */
int attn_suggest_threshold(size_t len);

typedef struct attn_suggest {
    const char *word; /* what was typed */
    const char *best; /* the closest candidate so far within the threshold; NULL: none */
    int distance;     /* its distance (a word of 3+ characters that starts a candidate: 1) */
} attn_suggest;

attn_suggest attn_suggest_start(const char *word);
/* Consider candidate (NULL and the typed word itself are ignored); the first of equally close
 * candidates wins, so offer them in the order they are listed to the user. */
void attn_suggest_offer(attn_suggest *s, const char *candidate);
/* "did you mean 'NAME'?" when there is a suggestion, else fallback (may be NULL: ""), written
 * into buf; returns buf. */
const char *attn_suggest_hint(const attn_suggest *s, const char *fallback, char *buf, size_t len);

#endif
