#define AS4GW_ERR_IMPL   /* the functions, not err.h's analyzer macros */
#include "err.h"

#include <stdio.h>
#include <string.h>

#include "buf.h"

void
err_clear(struct err *err)
{
	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
}

static void err_vformat(struct err *err, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void
err_vformat(struct err *err, const char *fmt, va_list ap)
{
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);

	if (n < 0)
		err->msg[0] = '\0';
	else if ((size_t)n >= sizeof(err->msg)) /* cut: not inside a character */
		err->msg[buf_utf8_prefix(err->msg, sizeof(err->msg) - 1)] = '\0';
}

int
err_set(struct err *err, enum err_kind kind, const char *ebms_code,
    const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err->kind != ERR_NONE)
		return -1;
	err->kind = kind;
	err->ebms_code = ebms_code;
	err->ebms_detail = NULL;
	va_start(ap, fmt);
	err_vformat(err, fmt, ap);
	va_end(ap);
	return -1;
}

int
err_http(struct err *err, int status, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err->kind != ERR_NONE)
		return -1;
	err->kind = ERR_HTTP;
	err->http_status = status;
	va_start(ap, fmt);
	err_vformat(err, fmt, ap);
	va_end(ap);
	return -1;
}

int
err_soap(struct err *err, enum err_soap_code code, int status,
    const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err->kind != ERR_NONE)
		return -1;
	err->kind = ERR_SOAP;
	err->soap_code = code;
	err->http_status = status;
	va_start(ap, fmt);
	err_vformat(err, fmt, ap);
	va_end(ap);
	return -1;
}

int
err_ebms(struct err *err, const char *ebms_code, const char *ebms_detail,
    const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err->kind != ERR_NONE)
		return -1;
	err->kind = ERR_EBMS;
	err->ebms_code = ebms_code;
	err->ebms_detail = ebms_detail;
	va_start(ap, fmt);
	err_vformat(err, fmt, ap);
	va_end(ap);
	return -1;
}

void
err_detail(struct err *err, const char *fmt, ...)
{
	size_t used;
	va_list ap;
	int n;

	if (err == NULL)
		return;
	used = strnlen(err->detail, sizeof(err->detail));
	if (used + 3 >= sizeof(err->detail))
		return;
	if (used > 0) {
		err->detail[used++] = ';';
		err->detail[used++] = ' ';
		err->detail[used] = '\0';
	}
	va_start(ap, fmt);
	n = vsnprintf(err->detail + used, sizeof(err->detail) - used, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= sizeof(err->detail) - used)
		err->detail[used + buf_utf8_prefix(err->detail + used,
		    sizeof(err->detail) - used - 1)] = '\0';
}

const char *
err_kind_name(enum err_kind kind)
{
	switch (kind) {
	case ERR_NONE: return "none";
	case ERR_HTTP: return "http";
	case ERR_SOAP: return "soap";
	case ERR_EBMS: return "ebms";
	case ERR_STORE: return "store";
	case ERR_CONF: return "conf";
	case ERR_IO: return "io";
	case ERR_INTERNAL: return "internal";
	case ERR_UNAVAILABLE: return "unavailable";
	}
	return "unknown";
}
