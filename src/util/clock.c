#include "clock.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int64_t
clock_mono_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
clock_epoch_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
clock_iso8601(int64_t epoch_ms, char out[CLOCK_ISO_LEN])
{
	time_t secs = (time_t)(epoch_ms / 1000);
	char tmp[96];
	struct tm tm;

	(void)gmtime_r(&secs, &tm);
	(void)snprintf(tmp, sizeof(tmp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)(epoch_ms % 1000));
	tmp[CLOCK_ISO_LEN - 1] = '\0';
	memcpy(out, tmp, CLOCK_ISO_LEN);
}

/* Read exactly n digits into *ret; -1 if any is not a digit. */
static int
clock_digits(const char **p, int n, int *ret)
{
	int v = 0;

	while (n-- > 0) {
		if (!isdigit((unsigned char)**p))
			return -1;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	*ret = v;
	return 0;
}

static int
clock_days_in_month(int y, int m)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 ? 28 + leap : days[m - 1];
}

/* Parse "Z", "+hh:mm", "-hh:mm" or nothing into minutes east of UTC. */
static int
clock_parse_zone(const char *p, int *ret_min)
{
	int sign, hh, mm;

	*ret_min = 0;
	if (*p == '\0')
		return 0;
	if (p[0] == 'Z' && p[1] == '\0')
		return 0;
	if (*p != '+' && *p != '-')
		return -1;
	sign = *p++ == '-' ? -1 : 1;
	if (clock_digits(&p, 2, &hh) == -1 || *p++ != ':' ||
	    clock_digits(&p, 2, &mm) == -1 || *p != '\0' || hh > 14 || mm > 59)
		return -1;
	*ret_min = sign * (hh * 60 + mm);
	return 0;
}

int
clock_parse_iso8601(const char *s, int64_t *ret_ms)
{
	int y, mo, d, h, mi, sec, zone, ms = 0, scale = 100;
	const char *p = s;
	struct tm tm;
	time_t t;

	if (s == NULL || clock_digits(&p, 4, &y) == -1 || *p++ != '-' ||
	    clock_digits(&p, 2, &mo) == -1 || *p++ != '-' ||
	    clock_digits(&p, 2, &d) == -1 || *p++ != 'T' ||
	    clock_digits(&p, 2, &h) == -1 || *p++ != ':' ||
	    clock_digits(&p, 2, &mi) == -1 || *p++ != ':' ||
	    clock_digits(&p, 2, &sec) == -1)
		return -1;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		for (; isdigit((unsigned char)*p); p++) {
			ms += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (clock_parse_zone(p, &zone) == -1)
		return -1;
	if (y < 1 || mo < 1 || mo > 12 || d < 1 ||
	    d > clock_days_in_month(y, mo) || h > 24 || mi > 59 || sec > 60 ||
	    (h == 24 && (mi != 0 || sec != 0 || ms != 0)))
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	*ret_ms = ((int64_t)t - (int64_t)zone * 60) * 1000 + ms;
	return 0;
}
