#include "log.h"

#include <pthread.h>
#include <stdarg.h>

#include "buf.h"
#include "clock.h"

static FILE *log_out;
static enum log_level log_min = LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const log_level_names[] = {"debug", "info", "warn", "error"};

void
log_init(FILE *out, enum log_level min)
{
	log_out = out;
	log_min = min;
}

/* Write one finished line atomically with respect to other threads. */
static void
log_emit(struct buf *b)
{
	FILE *out = log_out != NULL ? log_out : stderr;

	if (b->data == NULL)
		return;
	(void)pthread_mutex_lock(&log_lock);
	(void)fwrite(b->data, 1, b->len, out);
	(void)fflush(out);
	(void)pthread_mutex_unlock(&log_lock);
}

static void
log_begin(struct buf *b, enum log_level level)
{
	char ts[CLOCK_ISO_LEN];

	clock_iso8601(clock_epoch_ms(), ts);
	(void)buf_printf(b, "{\"ts\":\"%s\",\"level\":\"%s\"", ts,
	    log_level_names[level]);
}

static void
log_field(struct buf *b, const char *name, const char *value)
{
	if (value == NULL)
		return;
	(void)buf_printf(b, ",\"%s\":\"", name);
	(void)buf_json_escape(b, value);
	(void)buf_puts(b, "\"");
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	struct buf msg = {0}, line = {0};
	va_list ap;
	int n;

	if (level < log_min)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n >= 0 && buf_append(&msg, "", 0) == 0 &&
	    buf_printf(&msg, "%*s", n, "") == 0) {
		va_start(ap, fmt);
		(void)vsnprintf(msg.data, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	log_begin(&line, level);
	log_field(&line, "msg", msg.data != NULL ? msg.data : fmt);
	(void)buf_puts(&line, "}\n");
	log_emit(&line);
	buf_free(&msg);
	buf_free(&line);
}

void
log_event(enum log_level level, const char *event, const char *msg,
    const char *const *fields, size_t n)
{
	struct buf line = {0};
	size_t i;

	if (level < log_min)
		return;
	log_begin(&line, level);
	log_field(&line, "event", event);
	log_field(&line, "msg", msg);
	for (i = 0; i + 1 < 2 * n; i += 2)
		log_field(&line, fields[i], fields[i + 1]);
	(void)buf_puts(&line, "}\n");
	log_emit(&line);
	buf_free(&line);
}

void
log_request(const struct log_request *r)
{
	enum log_level level = r->status >= 500 ? LOG_ERROR :
	    r->duplicate_of != NULL ? LOG_WARN : LOG_INFO;
	struct buf line = {0};

	if (level < log_min)
		return;
	log_begin(&line, level);
	(void)buf_puts(&line, ",\"event\":\"request\"");
	log_field(&line, "request_id", r->request_id);
	log_field(&line, "peer", r->peer);
	log_field(&line, "method", r->method);
	log_field(&line, "path", r->path);
	(void)buf_printf(&line, ",\"status\":%d", r->status);
	log_field(&line, "message_id", r->message_id);
	log_field(&line, "from_party", r->from_party);
	log_field(&line, "pmode", r->pmode);
	log_field(&line, "outcome", r->outcome);
	log_field(&line, "ebms_code", r->ebms_code);
	log_field(&line, "error", r->error);
	log_field(&line, "detail", r->detail);
	log_field(&line, "business_key", r->business_key);
	log_field(&line, "business_note", r->business_note);
	log_field(&line, "duplicate_of", r->duplicate_of);
	if (r->replayed)
		(void)buf_puts(&line, ",\"replayed\":true");
	log_field(&line, "decryption_retiring", r->decryption_retiring);
	(void)buf_printf(&line, ",\"bytes_in\":%lld,\"ms\":%lld}\n",
	    (long long)r->bytes_in, (long long)r->ms);
	log_emit(&line);
	buf_free(&line);
}
