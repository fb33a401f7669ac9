/* table.h — results rows on the terminal: the summary table of run and sweep, CV warnings. */
#ifndef BENCH_TABLE_H
#define BENCH_TABLE_H

#include <stdio.h>

#include "results.h"

void bench_table_header(FILE *f);
void bench_table_row(FILE *f, const bench_point *pt);
/* On stderr, when the point's CV exceeds 10 %: what it means and how to fix it. Returns 1 if
 * it warned. */
int bench_warn_noisy(const bench_point *pt);

#endif
