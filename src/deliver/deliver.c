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
#include "deliver.h"

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

#define DELIVER_NAME_LEN (2 * CODEC_SHA256_LEN)
#define DELIVER_RMTREE_DEPTH 16  /* what a command may nest in its temp dir */
#define DELIVER_DIR_MODE 0750
#define DELIVER_FILE_MODE 0640

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

/*
 * Remove name under dfd and, for a directory, everything in it (depth
 * bounded; symbolic links are removed, never followed).  0 ok or absent,
 * -1 with errno.
 */
static int
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

/* ---- message.json ----------------------------------------------------- */

/* Append sep "key": "value" (or null) to b. */
static int
deliver_json_str(struct buf *b, const char *sep, const char *key,
    const char *value)
{
	if (buf_printf(b, "%s\"%s\": ", sep, key) == -1)
		return -1;
	if (value == NULL)
		return buf_puts(b, "null");
	if (buf_puts(b, "\"") == -1 || buf_json_escape(b, value) == -1)
		return -1;
	return buf_puts(b, "\"");
}

/*
 * Append the stored PartProperties: the JSON object text as is (store code
 * wrote it from the header), or, should it not look like an object, as a
 * JSON string so message.json stays valid.
 */
static int
deliver_json_props(struct buf *b, const char *props)
{
	const char *end;

	if (props == NULL)
		return buf_puts(b, "{}");
	while (isspace((unsigned char)*props))
		props++;
	end = props + strlen(props);
	while (end > props && isspace((unsigned char)end[-1]))
		end--;
	if (end - props >= 2 && *props == '{' && end[-1] == '}')
		return buf_append(b, props, (size_t)(end - props));
	if (buf_puts(b, "\"") == -1 || buf_json_escape(b, props) == -1)
		return -1;
	return buf_puts(b, "\"");
}

/* Append the "parts" array, one object per line. */
static int
deliver_json_parts(struct buf *b, const struct store_delivery *d)
{
	static const char S[] = ", ";
	const struct store_part *p;
	size_t i;

	if (buf_puts(b, ",\n  \"parts\": [") == -1)
		return -1;
	for (i = 0; i < d->n_parts; i++) {
		p = &d->parts[i];
		if (buf_printf(b, "%s\n    {\"part_no\": %d", i > 0 ? "," : "",
		    p->part_no) == -1 ||
		    deliver_json_str(b, S, "content_id", p->content_id) == -1 ||
		    deliver_json_str(b, S, "mime_type", p->mime_type) == -1 ||
		    buf_puts(b, ", \"properties\": ") == -1 ||
		    deliver_json_props(b, p->properties) == -1 ||
		    buf_printf(b, ", \"file\": \"part-%d.bin\"}",
		    p->part_no) == -1)
			return -1;
	}
	return buf_puts(b, d->n_parts > 0 ? "\n  ]\n}\n" : "]\n}\n");
}

/* The whole message.json of d into b (see deliver.h for the fields). */
static int
deliver_json(struct buf *b, const struct store_delivery *d)
{
	static const char T[] = ",\n  ";
	char at[CLOCK_ISO_LEN];

	clock_iso8601(d->received_at_ms, at);
	if (buf_puts(b, "{\n  \"message_id\": \"") == -1 ||
	    buf_json_escape(b, d->message_id) == -1 ||
	    buf_puts(b, "\"") == -1 ||
	    deliver_json_str(b, T, "from", d->from_party) == -1 ||
	    deliver_json_str(b, T, "to", d->to_party) == -1 ||
	    deliver_json_str(b, T, "service", d->service) == -1 ||
	    deliver_json_str(b, T, "action", d->action) == -1 ||
	    deliver_json_str(b, T, "conversation_id",
	    d->conversation_id) == -1 ||
	    deliver_json_str(b, T, "agreement_ref", d->agreement_ref) == -1 ||
	    deliver_json_str(b, T, "pmode", d->pmode_id) == -1 ||
	    deliver_json_str(b, T, "received_at", at) == -1)
		return -1;
	return deliver_json_parts(b, d);
}

/* ---- the directory target --------------------------------------------- */

/* Write message.json and part-<n>.bin of d into the directory tfd. */
static int
deliver_fill(int tfd, const struct store_delivery *d, int sync,
    struct err *err)
{
	struct deliver_fname f;
	struct buf b = {0};
	size_t i;
	int rc = -1;

	if (deliver_json(&b, d) == -1) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (deliver_write_file(tfd, "message.json", b.data, b.len, sync,
	    err) == -1)
		goto out;
	for (i = 0; i < d->n_parts; i++) {
		(void)snprintf(f.s, sizeof(f.s), "part-%d.bin",
		    d->parts[i].part_no);
		if (deliver_write_file(tfd, f.s, d->parts[i].data,
		    d->parts[i].len, sync, err) == -1)
			goto out;
	}
	if (sync && fsync(tfd) == -1) {
		err_set(err, ERR_IO, NULL,
		    "could not sync message directory: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
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
deliver_build(int pfd, const char *name, const struct store_delivery *d,
    int sync, struct err *err)
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
	if (deliver_fill(tfd, d, sync, err) == 0 &&
	    deliver_publish(pfd, tmp.s, name, sync, err) == 0)
		rc = 0;
out:
	if (tfd != -1)
		(void)close(tfd);
	if (rc == -1)
		(void)deliver_rmtree_at(pfd, tmp.s, DELIVER_RMTREE_DEPTH);
	return rc;
}

/* The directory target: o->to_dir/<name>, everything fsync'd. */
static int
deliver_to_dir(const struct deliver_opts *o, const struct store_delivery *d,
    const char *name, struct err *err)
{
	int pfd, rc;

	pfd = open(o->to_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd == -1)
		return err_set(err, ERR_IO, NULL,
		    "could not open directory \"%s\": %s", o->to_dir,
		    strerror(errno));
	rc = deliver_build(pfd, name, d, 1, err);
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
 * stdout to our stderr, no inherited descriptors; then exec /bin/sh.
 * Async-signal-safe calls only.
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
	(void)execve("/bin/sh", argv, envp);
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

/* Run `/bin/sh -c CMD sh PATH` and wait for it (see deliver.h). */
static int
deliver_command(const struct deliver_opts *o, const struct store_delivery *d,
    const char *path, struct arena *a, struct err *err)
{
	char **envp = deliver_env(a, d, path);
	char **argv = arena_calloc(a, 6, sizeof(*argv));
	pid_t pid;

	if (envp == NULL || argv == NULL ||
	    (argv[0] = arena_strdup(a, "sh")) == NULL ||
	    (argv[1] = arena_strdup(a, "-c")) == NULL ||
	    (argv[2] = arena_strdup(a, o->exec_cmd)) == NULL ||
	    (argv[3] = arena_strdup(a, "sh")) == NULL ||
	    (argv[4] = arena_strdup(a, path)) == NULL)
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
deliver_exec(const struct deliver_opts *o, const struct store_delivery *d,
    const char *name, struct arena *a, struct err *err)
{
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
	if (deliver_build(pfd, name, d, 0, err) == -1)
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

/* ---- the queue -------------------------------------------------------- */

/* Tell the caller what became of d. */
static void
deliver_report(const struct deliver_opts *o, const struct store_delivery *d,
    const char *name, int64_t retry_in_ms, const struct err *err)
{
	struct deliver_report r;

	if (o->report == NULL)
		return;
	r.message_id = d->message_id;
	r.from_party = d->from_party;
	r.name = name;
	r.attempts = d->attempts;
	r.ok = err == NULL;
	r.retry_in_ms = retry_in_ms;
	r.err = err;
	o->report(o->report_arg, &r);
}

/*
 * Hand the claimed d to the target, then mark the row: done after success,
 * 'ready' after the back-off otherwise.  1, 2 or -1 as deliver_one().
 */
static int
deliver_claimed(struct store *s, const struct deliver_opts *o,
    const struct store_delivery *d, struct arena *a, struct err *err)
{
	char name[DELIVER_NAME_LEN + 1];
	struct err terr = {0};
	int64_t now, retry = 0;
	int rc = -1, ok;

	if (deliver_name(d->from_party, d->message_id, name, err) == -1)
		goto out;
	ok = (o->to_dir != NULL ? deliver_to_dir(o, d, name, &terr) :
	    deliver_exec(o, d, name, a, &terr)) == 0;
	now = clock_epoch_ms();
	if (ok)
		fault_point("deliver.after-target");
	else
		retry = deliver_backoff_ms(d->attempts);
	if (store_finish_error(s, d->from_party, d->message_id, ok, now,
	    now + retry, ok ? NULL : terr.msg, err) == -1)
		goto out;
	deliver_report(o, d, name, retry, ok ? NULL : &terr);
	if (!ok && err != NULL)
		*err = terr;
	rc = ok ? 1 : 2;
out:
	return rc;
}

/* Claim one message and hand it over (deliver.h): 1, 0, 2 or -1. */
int
deliver_one(struct store *s, const struct deliver_opts *o, struct err *err)
{
	struct store_delivery d;
	struct arena *a = NULL;
	int rc = -1;

	if ((o->to_dir == NULL) == (o->exec_cmd == NULL)) {
		err_set(err, ERR_INTERNAL, NULL,
		    "exactly one of a directory and a command is needed");
		goto out;
	}
	if ((a = arena_new(0)) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	memset(&d, 0, sizeof(d));
	rc = store_claim(s, clock_epoch_ms(), o->stale_ms >= 0 ? o->stale_ms :
	    DELIVER_STALE_MS_DEFAULT, a, &d, err);
	if (rc == 1) {
		/* committed: from here a crash leaves the row 'claimed' */
		fault_point("deliver.after-claim");
		rc = deliver_claimed(s, o, &d, a, err);
	}
out:
	arena_free(a);
	return rc;
}

/* deliver_one() until the queue is empty or *stop (deliver.h). */
int
deliver_run(struct store *s, const struct deliver_opts *o,
    const atomic_int *stop, struct deliver_counts *ret, struct err *err)
{
	struct err e = {0};
	size_t n = 0;
	int r = 0;

	while ((stop == NULL || !atomic_load(stop)) &&
	    (o->max_messages == 0 || n < o->max_messages)) {
		err_clear(&e); /* each message's own failure */
		if ((r = deliver_one(s, o, &e)) == -1)
			break;
		if (r == 1 || r == 2) {
			n++;
			if (r == 1)
				ret->delivered++;
			else
				ret->failed++;
			continue;
		}
		if (!o->follow || (stop != NULL && atomic_load(stop)))
			break;
		if ((r = store_wait(s, DELIVER_WAIT_MS, &e)) == -1)
			break;
	}
	if (r == -1 && err != NULL && err->kind == ERR_NONE)
		*err = e;
	return r == -1 ? -1 : 0;
}
