/*
 * targets.h — output paths checked before any work, so that a command writes only files it
 * creates for that purpose. An output is refused (ATTN_EINVAL, one line naming the option and
 * what to do) when it
 *   - is one of the command's inputs: the same path, or the same file by device and inode (a
 *     hard or symbolic link, "./x" for "x"), or the same name in the same directory (a new file);
 *   - is an existing results file (its HDF5 attribute `format` says so) and the command does not
 *     append runs to results files: export, report, run --output, compare --plot;
 *   - exists and is not a regular file (a directory, a FIFO, a device);
 *   - cannot be written (bench_check_writable).
 */
#ifndef BENCH_TARGETS_H
#define BENCH_TARGETS_H

#include <stdbool.h>
#include <stddef.h>

#include "attn_core.h"

typedef enum bench_target_kind {
    BENCH_TARGET_FILE, /* a file written whole (export, report, a figure): never a results file */
    BENCH_TARGET_TENSORS, /* an HDF5 file of tensors (run --output): never a results file */
    BENCH_TARGET_RESULTS, /* a results file the command appends a run to (run --out, sweep --out) */
} bench_target_kind;

/* One input of a command, for the message: the option that named it ("" for the positional
 * results file) and its path (NULL: none given, skipped). */
typedef struct bench_input {
    const char *what, *path;
} bench_input;

/* Refuse path (given by option `what`, e.g. "--out") as an output of `kind` when any rule above
 * says so; ATTN_OK otherwise. Opens no file but to read the `format` attribute of an existing
 * regular HDF5 file. */
attn_status bench_check_target(const char *path, const char *what, bench_target_kind kind,
                               const bench_input *inputs, int ninputs, char *msg, size_t msg_len);

/* Do a and b name the same file? Both exist: the same device and inode; otherwise the same
 * directory (resolved) and the same last component. */
bool bench_same_file(const char *a, const char *b);

#endif
