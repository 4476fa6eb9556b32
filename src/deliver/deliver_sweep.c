/*
 * deliver_sweep — remove the temporary directories a deliverer killed in
 * the middle of a message left under the hand-off directory (issue 11 item
 * 1b): DIR/.tmp-<name>-<pid> (written, not yet renamed) and
 * DIR/.old-<name>-<pid> (a replaced copy not yet removed).  A directory is
 * removed when its pid is not a live process, or when it is older than
 * stale_ms: a pid reused by another process only delays the sweep until
 * then, and a live deliverer finishes a message far sooner (its claim has
 * been taken over by then anyway).  The directory target is for one host:
 * pids of deliverers on another host sharing DIR are not ours to judge.
 */
#include "deliver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/clock.h"

/*
 * The pid at the end of a temporary directory name of ours
 * (".tmp-" or ".old-", 64 hex digits, '-', decimal pid), or 0 when the name
 * is not one; only those of message name when name is not NULL.
 */
static long
deliver_sweep_pid(const char *e, const char *name)
{
	const char *p;
	char *end;
	long pid;

	if (strncmp(e, ".tmp-", 5) != 0 && strncmp(e, ".old-", 5) != 0)
		return 0;
	p = e + 5;
	if (strspn(p, "0123456789abcdef") != DELIVER_NAME_LEN ||
	    p[DELIVER_NAME_LEN] != '-')
		return 0;
	if (name != NULL && strncmp(p, name, DELIVER_NAME_LEN) != 0)
		return 0;
	p += DELIVER_NAME_LEN + 1;
	if (*p < '1' || *p > '9')
		return 0;
	errno = 0;
	pid = strtol(p, &end, 10);
	return errno != 0 || *end != '\0' || pid <= 0 ? 0 : pid;
}

/* 1 when the leftover e (its pid) is to be removed (see above). */
static int
deliver_sweep_dead(int pfd, const char *e, long pid, int64_t stale_ms)
{
	struct stat st;
	int64_t mtime_ms;

	if (pid == (long)getpid())
		return 0;  /* ours: deliver_build removes it itself */
	if (kill((pid_t)pid, 0) == -1 && errno == ESRCH)
		return 1;
	if (fstatat(pfd, e, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;
	mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 +
	    st.st_mtim.tv_nsec / 1000000;
	return clock_epoch_ms() - mtime_ms > stale_ms;
}

/* Sweep leftovers under pfd (deliver_int.h). */
size_t
deliver_sweep_at(int pfd, const char *name, int64_t stale_ms)
{
	struct dirent *de;
	size_t n = 0;
	long pid;
	DIR *d;
	int fd;

	if ((fd = dup(pfd)) == -1)
		return 0;
	if ((d = fdopendir(fd)) == NULL) {
		(void)close(fd);
		return 0;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if ((pid = deliver_sweep_pid(de->d_name, name)) == 0 ||
		    !deliver_sweep_dead(pfd, de->d_name, pid, stale_ms))
			continue;
		if (deliver_rmtree_at(pfd, de->d_name,
		    DELIVER_RMTREE_DEPTH) == 0)
			n++;
	}
	(void)closedir(d);
	return n;
}
