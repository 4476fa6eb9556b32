/*
 * deliver — the backend hand-off (see deliver.h): claim, write the message
 * directory (or run a command on it), and only then mark the row done.
 *
 * Crash safety of the directory target: everything is written under
 * DIR/.tmp-<name>-<pid>, each file and the directory fsync'd, then renamed
 * to DIR/<name> and DIR fsync'd, so DIR/<name> is either absent or complete.
 * A crash after the rename and before store_finish() leaves the row
 * 'claimed'; the next deliverer takes it over after stale_ms and replaces
 * DIR/<name> with byte-identical content (message.json holds nothing that
 * changes between attempts).
 */
#include "deliver_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/clock.h"
#include "../util/codec.h"
#include "../util/fault.h"

#define DELIVER_DIR_MODE 0750

/* A directory entry name of ours: ".tmp-<64 hex>-<pid>" and the like. */
struct deliver_fname {
	char s[DELIVER_NAME_LEN + 48];
};

/* The back-off after a failed attempt (deliver.h). */
int64_t
deliver_backoff_ms(int attempts)
{
	/* 1 s, 2 s, 4 s ... capped; 2^6 s already exceeds the cap */
	if (attempts <= 1)
		return 1000;
	if (attempts > 7)
		return DELIVER_BACKOFF_MAX_MS;
	return INT64_C(1000) << (attempts - 1) < DELIVER_BACKOFF_MAX_MS ?
	    INT64_C(1000) << (attempts - 1) : DELIVER_BACKOFF_MAX_MS;
}

/* The directory name of a message: hex SHA-256 over party, NUL and id
 * (deliver.h). */
int
deliver_name(const char *from_party, const char *message_id, char out[65],
    struct err *err)
{
	unsigned char md[CODEC_SHA256_LEN];
	struct codec_sha256 *h = codec_sha256_new();
	int bad;

	if (h == NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not hash message id");
	bad = codec_sha256_update(h, from_party, strlen(from_party) + 1) ||
	    codec_sha256_update(h, message_id, strlen(message_id));
	/* final runs (and frees) even after a failed update */
	if (codec_sha256_final(h, md) == -1 || bad)
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not hash message id");
	codec_hex(md, sizeof(md), out);
	return 0;
}

/* ---- files -------------------------------------------------------------- */

/* Remove name under dfd, recursively (deliver_int.h). */
int
deliver_rmtree_at(int dfd, const char *name, int depth)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if ((errno != EISDIR && errno != EPERM) || depth <= 0)
		return -1;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			(void)close(fd);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		rc = deliver_rmtree_at(dirfd(d), de->d_name, depth - 1);
	}
	(void)closedir(d);
	if (rc == 0 && unlinkat(dfd, name, AT_REMOVEDIR) == -1 &&
	    errno != ENOENT)
		rc = -1;
	return rc;
}

/* Write len bytes to a new file name under dfd, fsync'd when sync. */
static int
deliver_write_file(int dfd, const char *name, const void *data, size_t len,
    int sync, struct err *err)
{
	const unsigned char *p = data;
	ssize_t n;
	int fd, rc = -1;

	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    DELIVER_FILE_MODE);
	if (fd == -1)
		goto out;
	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			goto out;
		}
		p += n;
		len -= (size_t)n;
	}
	if (sync && fsync(fd) == -1)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		err_set(err, ERR_IO, NULL, "could not write \"%s\": %s", name,
		    strerror(errno));
	if (fd != -1 && close(fd) == -1 && rc == 0)
		rc = err_set(err, ERR_IO, NULL, "could not write \"%s\": %s",
		    name, strerror(errno));
	return rc;
}

/* ---- the directory target --------------------------------------------- */

/*
 * Write part-<n>.bin of every part (streamed: deliver_part.c), then
 * message.json with their digests, into the directory tfd.
 */
static int
deliver_fill(int tfd, struct deliver_job *j, struct err *err)
{
	const struct store_delivery *d = j->d;
	struct buf b = {0};
	size_t i;
	int rc = -1;

	j->md = calloc(d->n_parts > 0 ? d->n_parts : 1, sizeof(*j->md));
	if (j->md == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < d->n_parts; i++)
		if (deliver_part_write(tfd, j, i, err) == -1)
			goto out;
	/* a kill here leaves DIR/.tmp-<name>-<pid> (deliver_sweep.c) */
	fault_point("deliver.mid-write");
	if (deliver_json_md(&b, d, j->md, j->conf) == -1) {
		err_set(err, ERR_INTERNAL, NULL,
		    "could not build message.json");
		goto out;
	}
	if (deliver_write_file(tfd, "message.json", b.data, b.len, j->sync,
	    err) == -1)
		goto out;
	if (j->sync && fsync(tfd) == -1) {
		err_set(err, ERR_IO, NULL,
		    "could not sync message directory: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(j->md);
	j->md = NULL;
	buf_free(&b);
	return rc;
}

/*
 * Rename the complete directory tmp to name (both under pfd).  A name left
 * by an earlier delivery whose row was never marked done (crash) is moved
 * aside and removed: the new copy has the same content.  Then pfd is
 * fsync'd so the rename itself survives a crash.
 */
static int
deliver_publish(int pfd, const char *tmp, const char *name, int sync,
    struct err *err)
{
	struct deliver_fname old;

	if (renameat(pfd, tmp, pfd, name) == -1) {
		if (errno != EEXIST && errno != ENOTEMPTY && errno != ENOTDIR &&
		    errno != EISDIR)
			goto fail;
		(void)snprintf(old.s, sizeof(old.s), ".old-%s-%ld", name,
		    (long)getpid());
		if (deliver_rmtree_at(pfd, old.s, DELIVER_RMTREE_DEPTH) == -1 ||
		    renameat(pfd, name, pfd, old.s) == -1 ||
		    renameat(pfd, tmp, pfd, name) == -1)
			goto fail;
		(void)deliver_rmtree_at(pfd, old.s, DELIVER_RMTREE_DEPTH);
	}
	if (sync && fsync(pfd) == -1)
		goto fail;
	return 0;
fail:
	return err_set(err, ERR_IO, NULL,
	    "could not move \"%s\" into place: %s", name, strerror(errno));
}

/*
 * Build the message directory pfd/<name>: write it as pfd/.tmp-<name>-<pid>,
 * then publish it.  Nothing but a complete directory ever carries <name>;
 * on failure the temporary one is removed.
 */
static int
deliver_build(int pfd, const char *name, struct deliver_job *j,
    struct err *err)
{
	struct deliver_fname tmp;
	int tfd = -1, rc = -1;

	(void)snprintf(tmp.s, sizeof(tmp.s), ".tmp-%s-%ld", name,
	    (long)getpid());
	if (deliver_rmtree_at(pfd, tmp.s, DELIVER_RMTREE_DEPTH) == -1 ||
	    mkdirat(pfd, tmp.s, DELIVER_DIR_MODE) == -1 ||
	    (tfd = openat(pfd, tmp.s,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		err_set(err, ERR_IO, NULL, "could not create \"%s\": %s", tmp.s,
		    strerror(errno));
		goto out;
	}
	if (deliver_fill(tfd, j, err) == 0 &&
	    deliver_publish(pfd, tmp.s, name, j->sync, err) == 0)
		rc = 0;
out:
	if (tfd != -1)
		(void)close(tfd);
	if (rc == -1)
		(void)deliver_rmtree_at(pfd, tmp.s, DELIVER_RMTREE_DEPTH);
	return rc;
}

/* The claim age after which a claim is taken over (deliver.h). */
static int64_t
deliver_stale_ms(const struct deliver_opts *o)
{
	return o->stale_ms >= 0 ? o->stale_ms : DELIVER_STALE_MS_DEFAULT;
}

/* Sweep the leftovers of dead deliverers from o->to_dir (deliver.h). */
size_t
deliver_sweep(const struct deliver_opts *o)
{
	size_t n;
	int pfd;

	if (o->to_dir == NULL ||
	    (pfd = open(o->to_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return 0;
	n = deliver_sweep_at(pfd, NULL, deliver_stale_ms(o));
	(void)close(pfd);
	return n;
}

/* The directory target: o->to_dir/<name>, everything fsync'd. */
static int
deliver_to_dir(struct store *s, const struct deliver_opts *o,
    const struct store_delivery *d, const char *name, struct err *err)
{
	struct deliver_job j = { .s = s, .d = d, .conf = o->conf, .sync = 1 };
	int pfd, rc;

	pfd = open(o->to_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd == -1)
		return err_set(err, ERR_IO, NULL,
		    "could not open directory \"%s\": %s", o->to_dir,
		    strerror(errno));
	/* a redelivery: a deliverer died with this message in hand, maybe
	 * mid-write (issue 11 item 1b) */
	if (d->attempts > 1)
		(void)deliver_sweep_at(pfd, name, deliver_stale_ms(o));
	rc = deliver_build(pfd, name, &j, err);
	(void)close(pfd);
	return rc;
}

/* ---- the command target ----------------------------------------------- */

/* 1 when the environment entry e is one of names (NAME=...). */
static int
deliver_env_ours(const char *e, const char *const *names, size_t n)
{
	size_t i, len;

	for (i = 0; i < n; i++) {
		len = strlen(names[i]);
		if (strncmp(e, names[i], len) == 0 && e[len] == '=')
			return 1;
	}
	return 0;
}

/* The command's environment: ours with the AS4GW_* variables (arena). */
static char **
deliver_env(struct arena *a, const struct store_delivery *d, const char *path)
{
	static const char *const names[] = { "AS4GW_MESSAGE_ID", "AS4GW_FROM",
	    "AS4GW_SERVICE", "AS4GW_ACTION", "AS4GW_DIR" };
	const char *values[] = { d->message_id, d->from_party, d->service,
	    d->action, path };
	const size_t nn = sizeof(names) / sizeof(names[0]);
	size_t n = 0, i, j = 0;
	char **env;

	while (environ != NULL && environ[n] != NULL)
		n++;
	if ((env = arena_calloc(a, n + nn + 1, sizeof(*env))) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if (!deliver_env_ours(environ[i], names, nn))
			env[j++] = environ[i];
	for (i = 0; i < nn; i++)
		if ((env[j++] = arena_sprintf(a, "%s=%s", names[i],
		    values[i])) == NULL)
			return NULL;
	return env;
}

/*
 * In the child after fork(): own process group (so a timeout kills the
 * whole pipeline), default signal dispositions and mask, stdin /dev/null,
 * stdout to our stderr, no inherited descriptors; then exec argv[0] (a
 * name without '/' is looked up in PATH).  Async-signal-safe calls only,
 * but for execvpe's PATH search.
 */
static void
deliver_child(char **argv, char **envp)
{
	static const int sigs[] = { SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	sigset_t none;
	size_t i;
	int fd;

	(void)setpgid(0, 0);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		(void)signal(sigs[i], SIG_DFL);
	(void)sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	fd = open("/dev/null", O_RDONLY);
	if (fd == -1 || dup2(fd, STDIN_FILENO) == -1 ||
	    dup2(STDERR_FILENO, STDOUT_FILENO) == -1)
		_exit(126);
	(void)close_range(3, ~0U, 0);
	(void)execvpe(argv[0], argv, envp);
	_exit(127);
}

/* Wait for pid up to timeout_s, killing its process group after that. */
static int
deliver_wait(pid_t pid, unsigned timeout_s, struct err *err)
{
	int64_t deadline = clock_mono_ms() + (int64_t)timeout_s * 1000;
	struct timespec nap = { 0, 1000000 };
	int st = 0, timed_out = 0;
	pid_t r;

	while ((r = waitpid(pid, &st, timed_out ? 0 : WNOHANG)) != pid) {
		if (r == -1 && errno != EINTR) {
			(void)kill(-pid, SIGKILL);
			return err_set(err, ERR_INTERNAL, NULL,
			    "could not wait for the command: %s",
			    strerror(errno));
		}
		if (r == 0 && clock_mono_ms() >= deadline) {
			(void)kill(-pid, SIGKILL);
			timed_out = 1;
		} else if (r == 0) {
			(void)nanosleep(&nap, NULL);
			if (nap.tv_nsec < 50000000)
				nap.tv_nsec *= 2;
		}
	}
	if (timed_out)
		return err_set(err, ERR_IO, NULL,
		    "command timed out after %u s", timeout_s);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		return err_set(err, ERR_IO, NULL,
		    "command exited with status %d", WEXITSTATUS(st));
	return err_set(err, ERR_IO, NULL, "command killed by signal %d",
	    WTERMSIG(st));
}

/* 1 when CMD is one program path, run without a shell (deliver.h). */
int
deliver_exec_direct(const char *cmd)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,@%:";

	return cmd[0] != '\0' && cmd[strspn(cmd, ok)] == '\0';
}

/*
 * The command's argv (arena): CMD PATH for a plain program path, else
 * /bin/sh -c CMD sh PATH (deliver.h); NULL out of memory.
 */
static char **
deliver_argv(const char *cmd, const char *path, struct arena *a)
{
	char **argv = arena_calloc(a, 6, sizeof(*argv));

	if (argv == NULL)
		return NULL;
	if (deliver_exec_direct(cmd))
		return (argv[0] = arena_strdup(a, cmd)) == NULL ||
		    (argv[1] = arena_strdup(a, path)) == NULL ? NULL : argv;
	if ((argv[0] = arena_strdup(a, "/bin/sh")) == NULL ||
	    (argv[1] = arena_strdup(a, "-c")) == NULL ||
	    (argv[2] = arena_strdup(a, cmd)) == NULL ||
	    (argv[3] = arena_strdup(a, "sh")) == NULL ||
	    (argv[4] = arena_strdup(a, path)) == NULL)
		return NULL;
	return argv;
}

/* Run the command on PATH and wait for it (see deliver.h). */
static int
deliver_command(const struct deliver_opts *o, const struct store_delivery *d,
    const char *path, struct arena *a, struct err *err)
{
	char **envp = deliver_env(a, d, path);
	char **argv = deliver_argv(o->exec_cmd, path, a);
	pid_t pid;

	if (envp == NULL || argv == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if ((pid = fork()) == -1)
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not start the command: %s", strerror(errno));
	if (pid == 0)
		deliver_child(argv, envp);
	(void)setpgid(pid, pid); /* also here: no race with a timeout kill */
	return deliver_wait(pid, o->exec_timeout_s != 0 ? o->exec_timeout_s :
	    DELIVER_EXEC_TIMEOUT_DEFAULT, err);
}

/*
 * The command target: the message directory in a private temporary
 * directory ($TMPDIR or /tmp), the command run on it, everything removed.
 */
static int
deliver_exec(struct store *s, const struct deliver_opts *o,
    const struct store_delivery *d, const char *name, struct arena *a,
    struct err *err)
{
	struct deliver_job j = { .s = s, .d = d, .conf = o->conf, .sync = 0 };
	const char *tmpdir = getenv("TMPDIR");
	char base[PATH_MAX], path[PATH_MAX + DELIVER_NAME_LEN + 2];
	int pfd = -1, rc = -1;

	if (tmpdir == NULL || *tmpdir != '/' || strlen(tmpdir) > PATH_MAX / 2)
		tmpdir = "/tmp";
	(void)snprintf(base, sizeof(base), "%s/as4gw-deliver-XXXXXX", tmpdir);
	if (mkdtemp(base) == NULL) {
		base[0] = '\0';
		err_set(err, ERR_IO, NULL, "could not create a directory in "
		    "\"%s\": %s", tmpdir, strerror(errno));
		goto out;
	}
	if ((pfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		err_set(err, ERR_IO, NULL, "could not open \"%s\": %s", base,
		    strerror(errno));
		goto out;
	}
	if (deliver_build(pfd, name, &j, err) == -1)
		goto out;
	(void)snprintf(path, sizeof(path), "%s/%s", base, name);
	rc = deliver_command(o, d, path, a, err);
out:
	if (pfd != -1)
		(void)close(pfd);
	if (base[0] != '\0')
		(void)deliver_rmtree_at(AT_FDCWD, base, DELIVER_RMTREE_DEPTH);
	return rc;
}

/* Hand d to the target of o (deliver_int.h). */
int
deliver_target(struct store *s, const struct deliver_opts *o,
    const struct store_delivery *d, const char *name, struct arena *a,
    struct err *err)
{
	return o->to_dir != NULL ? deliver_to_dir(s, o, d, name, err) :
	    deliver_exec(s, o, d, name, a, err);
}
