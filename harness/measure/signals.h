/*
 * signals.h — the process's one handler of SIGINT, SIGTERM and SIGHUP (signals.c).
 *
 * Two duties, one handler:
 * - Temporary files (store/atomic.c registers each ".NAME.tmp-PID" it creates): a signal that
 *   ends the process removes them first, then the process dies of the signal as the default
 *   disposition would.
 * - A graceful stop, asked for by a command that measures (sweep, run) with bench_signals_catch:
 *   the first signal only sets the stop request (bench_stop_signal), which the repetition loop
 *   (timing.c) and the sweep's point loop check; the command then abandons the point in progress,
 *   closes its file cleanly and exits with 128 + the signal (130 for SIGINT, 143 for SIGTERM). A
 *   second signal ends the process at once (temporary files removed).
 * A signal whose disposition is not the default (ignored by the parent: nohup, a background job;
 * or a handler of the embedding program) is left alone.
 *
 * Room measure/ (the lowest room of the harness, so that timing.c, store/ and cli/ share it).
 */
#ifndef BENCH_SIGNALS_H
#define BENCH_SIGNALS_H

#include <stdbool.h>

/* From now on, SIGINT, SIGTERM and SIGHUP ask the command to stop (see above). */
void bench_signals_catch(void);
/* The signal that asked to stop (SIGINT, SIGTERM, SIGHUP), or 0: nothing asked. */
int bench_stop_signal(void);
/* The signal's name without "SIG" ("INT", "TERM", "HUP"), for messages. */
const char *bench_signal_name(int sig);

/* Remove path (a temporary file) if a signal ends the process; false when too many are already
 * registered. bench_signals_forget(path) unregisters it. */
bool bench_signals_remove_on_exit(const char *path);
void bench_signals_forget(const char *path);

#endif
