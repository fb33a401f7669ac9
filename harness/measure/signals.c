/*
 * signals.c — SIGINT, SIGTERM and SIGHUP: the graceful stop of a measuring command and the
 * removal of temporary files when a signal ends the process (signals.h). The handler only sets a
 * flag or, when the process must end, unlinks and re-raises: async-signal-safe calls only.
 */
#include "signals.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { MAX_TMP = 4, PATH_LEN = 4096 };
static char tmp_names[MAX_TMP][PATH_LEN];
static volatile sig_atomic_t tmp_live[MAX_TMP];
static volatile sig_atomic_t catching;    /* bench_signals_catch was called */
static volatile sig_atomic_t stop_signal; /* the first signal while catching */

static const int handled[] = {SIGINT, SIGTERM, SIGHUP};
enum { NSIGNALS = sizeof handled / sizeof handled[0] };
static bool ours[NSIGNALS]; /* our handler is installed for handled[i] */

static void on_signal(int sig)
{
    if (catching && !stop_signal) {
        stop_signal = sig; /* the command stops at its next check */
        return;
    }
    for (int i = 0; i < MAX_TMP; i++)
        if (tmp_live[i]) unlink(tmp_names[i]);
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns: the process ends as by default */
}

/* Install the handler where the disposition is the default (never over the program's own, nor
 * over SIG_IGN). */
static void install(void)
{
    for (int s = 0; s < NSIGNALS; s++) {
        struct sigaction old;
        if (ours[s] || sigaction(handled[s], NULL, &old) != 0) continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        for (int o = 0; o < NSIGNALS; o++) sigaddset(&sa.sa_mask, handled[o]);
        ours[s] = sigaction(handled[s], &sa, NULL) == 0;
    }
}

/* Back to the default disposition once nothing needs the handler. */
static void uninstall_if_idle(void)
{
    if (catching) return;
    for (int i = 0; i < MAX_TMP; i++)
        if (tmp_live[i]) return;
    for (int s = 0; s < NSIGNALS; s++) {
        if (!ours[s]) continue;
        struct sigaction sa = {.sa_handler = SIG_DFL};
        sigemptyset(&sa.sa_mask);
        sigaction(handled[s], &sa, NULL);
        ours[s] = false;
    }
}

void bench_signals_catch(void)
{
    catching = 1;
    install();
}

int bench_stop_signal(void) { return stop_signal; }

const char *bench_signal_name(int sig)
{
    return sig == SIGINT ? "INT" : sig == SIGTERM ? "TERM" : sig == SIGHUP ? "HUP" : "?";
}

bool bench_signals_remove_on_exit(const char *path)
{
    if (strlen(path) >= PATH_LEN) return false;
    int slot = 0;
    while (slot < MAX_TMP && tmp_live[slot]) slot++;
    if (slot == MAX_TMP) return false;
    snprintf(tmp_names[slot], sizeof tmp_names[slot], "%s", path);
    tmp_live[slot] = 1;
    install();
    return true;
}

void bench_signals_forget(const char *path)
{
    for (int i = 0; i < MAX_TMP; i++)
        if (tmp_live[i] && strcmp(tmp_names[i], path) == 0) tmp_live[i] = 0;
    uninstall_if_idle();
}
