/*
 * fault — named fault points for the crash harness (issue 4).
 *
 * Compiled in only with `meson -Dfault_injection=true` (the test build of
 * scripts/test; never the build of scripts/run or a package); otherwise
 * fault_point() is an empty macro and no environment variable can trip it.
 * In a fault build, AS4GW_FAULT="NAME" or "NAME@N" makes the N-th (default
 * the first) pass through point NAME kill the process with SIGKILL: no
 * atexit handlers, no flushing, no rollback — what a power cut or the OOM
 * killer does.  The variable is read once, at the first call.
 *
 * Points (each documented where it sits):
 *   store.early-chunks    PostgreSQL: a large message's chunk rows COPYed
 *                         ahead of the decision (store_pg_early.c), its
 *                         hashes not yet waited for, no inbox row
 *   store.after-insert    inbox, payload and delivery rows written, no COMMIT
 *   store.before-commit   about to COMMIT the accept transaction
 *   http.after-commit     COMMIT done (outcome new), answer not yet queued
 *   http.mid-response     part of the answer body sent, then killed
 *   deliver.after-claim   a delivery row claimed (committed), target untouched
 *   deliver.mid-write     message.json written into the temporary directory,
 *                         the payloads not yet
 *   deliver.after-target  the target succeeded, row not yet marked done
 */
#ifndef AS4GW_FAULT_H
#define AS4GW_FAULT_H

#ifdef AS4GW_FAULT_INJECTION
/* Kill the process with SIGKILL when AS4GW_FAULT selects this pass. */
void fault_point(const char *name);
/* 1 when AS4GW_FAULT names this point (any N), without counting a pass;
 * for points that need to prepare (http.mid-response). */
int fault_armed(const char *name);
#else
#define fault_point(name) ((void)0)
#define fault_armed(name) 0
#endif

#endif
