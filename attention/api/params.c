/* params.c — named parameters of a table (a kind's, a dataset's): defaults, parsing with range
 * checks, formatting, validation of the table itself. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "attn_suggest.h"

attn_params attn_params_defaults(const attn_param_table *t)
{
    attn_params p = {{0}};
    for (int n = 0; n < t->count; n++) p.v[n] = t->defs[n].def;
    return p;
}

int attn_param_index(const attn_param_table *t, const char *name)
{
    for (int n = 0; n < t->count; n++)
        if (strcmp(t->defs[n].name, name) == 0) return n;
    return -1;
}

static int names_list(const attn_param_table *t, char *buf, size_t len)
{
    int w = 0;
    buf[0] = '\0';
    for (int n = 0; n < t->count && (size_t)w < len; n++)
        w += snprintf(buf + w, len - (size_t)w, "%s%s", n ? ", " : "", t->defs[n].name);
    if (t->count == 0) w = snprintf(buf, len, "none");
    return w;
}

attn_status attn_param_set(const attn_param_table *t, attn_params *p, const char *name,
                           const char *value, char *msg, size_t msg_len)
{
    const int idx = attn_param_index(t, name);
    const char *owner = t->owner;
    if (idx < 0) {
        char names[160], hint[96];
        names_list(t, names, sizeof names);
        attn_suggest s = attn_suggest_start(name);
        for (int n = 0; n < t->count; n++) attn_suggest_offer(&s, t->defs[n].name);
        attn_suggest_hint(&s, NULL, hint, sizeof hint);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s '%s' has no parameter '%s'%s%s (its parameters: %s)",
                         t->role ? t->role : "kind", owner, name, s.best ? ": " : "", hint, names);
    }
    const attn_param_def *d = &t->defs[idx];
    const int nchoices = attn_param_choice_count(d);
    for (int c = 0; c < nchoices; c++)
        if (strcmp(d->choices[c], value) == 0) {
            p->v[idx] = c;
            return ATTN_OK;
        }
    char *end = NULL;
    errno = 0;
    double x = strtod(value, &end);
    if (end == value || *end != '\0' || errno == ERANGE || !isfinite(x)) {
        if (nchoices == 0)
            return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: parameter %s='%s' is not a number",
                             owner, name, value);
        char names[160], hint[96];
        int w = 0;
        attn_suggest s = attn_suggest_start(value);
        for (int c = 0; c < nchoices && (size_t)w < sizeof names; c++) {
            w +=
                snprintf(names + w, sizeof names - (size_t)w, "%s%s", c ? ", " : "", d->choices[c]);
            attn_suggest_offer(&s, d->choices[c]);
        }
        attn_suggest_hint(&s, NULL, hint, sizeof hint);
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: parameter %s='%s' is not one of %s%s%s%s",
                         owner, name, value, names, s.best ? " (" : "", hint, s.best ? ")" : "");
    }
    if (d->integer && x != floor(x)) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: parameter %s=%s must be an integer", owner,
                         name, value);
    }
    if (x < d->min || x > d->max) {
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s: parameter %s=%s is out of range [%.12g, %.12g]", owner, name, value,
                         d->min, d->max);
    }
    p->v[idx] = x;
    return ATTN_OK;
}

void attn_params_resolve(const attn_ops *ops, const attn_shape *s, attn_params *p)
{
    /* the resolvers divide by the shape's sizes (H / Hkv, S / block): a shape that fails the
     * generic checks (e.g. read from a damaged results file) keeps its 'auto' values */
    if (ops->resolve && attn_shape_check(s, NULL, 0) == ATTN_OK) ops->resolve(ops, s, p);
}

int attn_param_choice_count(const attn_param_def *d)
{
    int n = 0;
    if (d->choices)
        while (d->choices[n]) n++;
    return n;
}

int attn_param_value_format(const attn_param_def *d, double v, char *buf, size_t len)
{
    const int nchoices = attn_param_choice_count(d);
    if (v >= 0 && v < nchoices && v == floor(v))
        return snprintf(buf, len, "%s", d->choices[(int)v]);
    return snprintf(buf, len, "%.12g", v);
}

int attn_params_format(const attn_param_table *t, const attn_params *p, char *buf, size_t len)
{
    int w = 0;
    if (len) buf[0] = '\0';
    for (int n = 0; n < t->count && (size_t)w < len; n++) {
        w += snprintf(buf + w, len - (size_t)w, "%s%s=", n ? "," : "", t->defs[n].name);
        if ((size_t)w < len)
            w += attn_param_value_format(&t->defs[n], p->v[n], buf + w, len - (size_t)w);
    }
    return w;
}

bool attn_valid_name(const char *s)
{
    if (s == NULL || *s == '\0') return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
    return true;
}

attn_status attn_param_table_validate(const attn_param_table *t, const char *what, char *msg,
                                      size_t msg_len)
{
    if (!attn_valid_name(t->owner))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: its parameter table names no owner", what);
    if (t->count < 0 || t->count > ATTN_MAX_PARAMS || (t->count > 0 && !t->defs)) {
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: %d parameters (at most %d, table required)",
                         what, t->count, ATTN_MAX_PARAMS);
    }
    for (int n = 0; n < t->count; n++) {
        const attn_param_def *d = &t->defs[n];
        if (!attn_valid_name(d->name) || !d->summary || !(d->min <= d->def && d->def <= d->max) ||
            (d->integer && d->def != floor(d->def))) {
            return attn_fail(ATTN_EFAIL, msg, msg_len,
                             "%s: parameter %d ('%s') has no summary or a default outside "
                             "[min, max]",
                             what, n, d->name ? d->name : "?");
        }
        const int nchoices = attn_param_choice_count(d);
        if (d->choices && (nchoices == 0 || !d->integer || d->min != 0 || d->max != nchoices - 1)) {
            return attn_fail(ATTN_EFAIL, msg, msg_len,
                             "%s: parameter '%s' has %d choices: it must be an integer with range "
                             "[0, %d]",
                             what, d->name, nchoices, nchoices - 1);
        }
        for (int m = 0; m < n; m++)
            if (strcmp(t->defs[m].name, d->name) == 0)
                return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: parameter '%s' defined twice", what,
                                 d->name);
    }
    return ATTN_OK;
}

attn_status attn_check(const attn_ops *ops, const attn_shape *s, const attn_params *p, char *msg,
                       size_t msg_len)
{
    if (attn_shape_check(s, msg, msg_len) != ATTN_OK) return ATTN_EINVAL;
    const unsigned dtypes = ops->dtypes ? ops->dtypes : ATTN_DTYPE_BIT(ATTN_F32);
    if (!(dtypes & ATTN_DTYPE_BIT(s->dtype)))
        return attn_fail(ATTN_ENODEF, msg, msg_len, "%s takes float32 q, k, v only (not %s)",
                         ops->name, attn_dtype_name(s->dtype));
    return ops->check(ops, s, p, msg, msg_len);
}
