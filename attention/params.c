/* params.c — a kind's named parameters: defaults, parsing with range checks, formatting. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"

attn_params attn_params_defaults(const attn_ops *ops)
{
    attn_params p = {{0}};
    for (int n = 0; n < ops->nparams; n++) p.v[n] = ops->params[n].def;
    return p;
}

int attn_param_index(const attn_ops *ops, const char *name)
{
    for (int n = 0; n < ops->nparams; n++)
        if (strcmp(ops->params[n].name, name) == 0) return n;
    return -1;
}

static int names_list(const attn_ops *ops, char *buf, size_t len)
{
    int w = 0;
    buf[0] = '\0';
    for (int n = 0; n < ops->nparams && (size_t)w < len; n++)
        w += snprintf(buf + w, len - (size_t)w, "%s%s", n ? ", " : "", ops->params[n].name);
    if (ops->nparams == 0) w = snprintf(buf, len, "none");
    return w;
}

attn_status attn_param_set(const attn_ops *ops, attn_params *p, const char *name, const char *value,
                           char *msg, size_t msg_len)
{
    int idx = attn_param_index(ops, name);
    if (idx < 0) {
        char names[160];
        names_list(ops, names, sizeof names);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "kind '%s' has no parameter '%s' (its parameters: %s)", ops->name, name,
                         names);
    }
    const attn_param_def *d = &ops->params[idx];
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
                             ops->name, name, value);
        char names[160];
        int w = 0;
        for (int c = 0; c < nchoices && (size_t)w < sizeof names; c++)
            w += snprintf(names + w, sizeof names - (size_t)w, "%s%s", c ? ", " : "", d->choices[c]);
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: parameter %s='%s' is not one of %s",
                         ops->name, name, value, names);
    }
    if (d->integer && x != floor(x)) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: parameter %s=%s must be an integer",
                         ops->name, name, value);
    }
    if (x < d->min || x > d->max) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: parameter %s=%s is out of range [%.12g, %.12g]",
                         ops->name, name, value, d->min, d->max);
    }
    p->v[idx] = x;
    return ATTN_OK;
}

void attn_params_resolve(const attn_ops *ops, const attn_shape *s, attn_params *p)
{
    if (ops->resolve) ops->resolve(s, p);
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
    if (v >= 0 && v < nchoices && v == floor(v)) return snprintf(buf, len, "%s", d->choices[(int)v]);
    return snprintf(buf, len, "%.12g", v);
}

int attn_params_format(const attn_ops *ops, const attn_params *p, char *buf, size_t len)
{
    int w = 0;
    if (len) buf[0] = '\0';
    for (int n = 0; n < ops->nparams && (size_t)w < len; n++) {
        w += snprintf(buf + w, len - (size_t)w, "%s%s=", n ? "," : "", ops->params[n].name);
        if ((size_t)w < len) w += attn_param_value_format(&ops->params[n], p->v[n], buf + w, len - (size_t)w);
    }
    return w;
}

attn_status attn_check(const attn_ops *ops, const attn_shape *s, const attn_params *p, char *msg,
                       size_t msg_len)
{
    if (attn_shape_check(s, msg, msg_len) != ATTN_OK) return ATTN_EINVAL;
    return ops->check(s, p, msg, msg_len);
}
