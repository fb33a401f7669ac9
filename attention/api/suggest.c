/* suggest.c — "did you mean": optimal-string-alignment distance and the closest known name. */
#include <stdio.h>
#include <string.h>

#include "attn_suggest.h"

enum { MAX_NAME = 64 };

static char fold(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

static int min3(int a, int b, int c)
{
    const int m = a < b ? a : b;
    return m < c ? m : c;
}

int attn_edit_distance(const char *a, const char *b)
{
    const size_t la = strlen(a), lb = strlen(b);
    if (la >= MAX_NAME || lb >= MAX_NAME) return MAX_NAME;
    /* d[i][j]: distance between the first i characters of a and the first j of b */
    int d[MAX_NAME][MAX_NAME];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            const int cost = fold(a[i - 1]) != fold(b[j - 1]);
            d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                fold(a[i - 2]) == fold(b[j - 1]) && d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1;
        }
    return d[la][lb];
}

int attn_suggest_threshold(size_t len) { return len <= 4 ? 1 : len <= 8 ? 2 : 3; }

attn_suggest attn_suggest_start(const char *word)
{
    return (attn_suggest){.word = word ? word : "", .best = NULL, .distance = MAX_NAME};
}

void attn_suggest_offer(attn_suggest *s, const char *candidate)
{
    if (!candidate || strcmp(candidate, s->word) == 0) return;
    /* an option's leading dashes count for the distance, not for the length or the prefix */
    const char *word = s->word + strspn(s->word, "-"), *cand = candidate + strspn(candidate, "-");
    const size_t len = strlen(word);
    int d = attn_edit_distance(s->word, candidate);
    if (len >= 3 && strncmp(cand, word, len) == 0 && d > 1) d = 1; /* "verb": "verbose" */
    if (d <= attn_suggest_threshold(len) && d < s->distance) {
        s->best = candidate;
        s->distance = d;
    }
}

const char *attn_suggest_hint(const attn_suggest *s, const char *fallback, char *buf, size_t len)
{
    if (s->best) snprintf(buf, len, "did you mean '%s'?", s->best);
    else snprintf(buf, len, "%s", fallback ? fallback : "");
    return buf;
}
