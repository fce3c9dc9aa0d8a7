/*
 * request.c - HTTP/1.x request parsing for httpd (no system calls).
 *
 * The parser is strict where being lax would be unsafe and lax where
 * clients commonly are:
 *   - lines end in CRLF or a bare LF; leading empty lines are skipped;
 *   - the request line is exactly METHOD SP TARGET SP HTTP/1.x; the
 *     method is a token, the target starts with '/' (origin form) and
 *     holds no control bytes or spaces;
 *   - header names are tokens followed directly by ':' (whitespace before
 *     the colon and obs-fold continuation lines are 400, RFC 9112 5.1);
 *   - HTTP/1.1 needs exactly one Host header; Transfer-Encoding in a
 *     request is refused (httpd takes no request bodies), a Content-Length
 *     body is discarded by the caller;
 *   - every length is checked against the buffer before it is used, and
 *     nothing here writes outside the caller's buffers.
 *
 * Path mapping decodes %XX first and then looks at segments, so "%2e%2e"
 * and "%2f" cannot smuggle a ".." past the check; ".." anywhere is 400
 * (as nginx answers for a path that climbs above the root).
 */
#include "request.h"

#include <string.h>
#include <strings.h>

/* RFC 9110 5.6.2 tchar. */
static bool is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

size_t req_skip_blank(const char *buf, size_t len)
{
	size_t i = 0;

	while (i < len && (buf[i] == '\n' || (buf[i] == '\r' && i + 1 < len &&
					       buf[i + 1] == '\n')))
		i += buf[i] == '\r' ? 2 : 1;
	return i;
}

size_t req_head_end(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		p++;
		if (p < end && *p == '\n')
			return (size_t)(p + 1 - buf);
		if (p + 1 < end && p[0] == '\r' && p[1] == '\n')
			return (size_t)(p + 2 - buf);
	}
	return 0;
}

/* Next line of [*p, end): returns its start, sets *n to its length without
 * the line end and advances *p past it; NULL at the end. */
static const char *next_line(const char **p, const char *end, size_t *n)
{
	const char *s = *p, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl)
		nl = end;
	*p = nl < end ? nl + 1 : end;
	*n = (size_t)(nl - s);
	if (*n && s[*n - 1] == '\r')
		(*n)--;
	return s;
}

static int parse_version(const char *v, size_t n, struct request *rq)
{
	if (n != 8 || memcmp(v, "HTTP/", 5) || v[6] != '.' ||
	    v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9')
		return 400;
	if (v[5] != '1')
		return 505;
	rq->minor = v[7] == '0' ? 0 : 1;	/* 1.x, x > 1: answer as 1.1 */
	return 0;
}

static int parse_request_line(const char *s, size_t n, struct request *rq,
			      bool *known)
{
	const char *sp1 = memchr(s, ' ', n), *sp2;
	size_t mlen, i;

	if (!sp1 || sp1 == s)
		return 400;
	mlen = (size_t)(sp1 - s);
	for (i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)s[i]))
			return 400;
	sp2 = memchr(sp1 + 1, ' ', n - mlen - 1);
	if (!sp2 || sp2 == sp1 + 1 || sp1[1] != '/')
		return 400;
	rq->target = sp1 + 1;
	rq->target_len = (size_t)(sp2 - rq->target);
	for (i = 0; i < rq->target_len; i++)
		if (is_ctl((unsigned char)rq->target[i]))
			return 400;
	*known = (mlen == 3 && !memcmp(s, "GET", 3)) ||
		 (mlen == 4 && !memcmp(s, "HEAD", 4));
	rq->head = mlen == 4 && !memcmp(s, "HEAD", 4);
	return parse_version(sp2 + 1, (size_t)(s + n - sp2 - 1), rq);
}

/* Does the comma-separated list v[0..n) contain token tok? */
static bool has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok), i = 0;

	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		size_t j = i;
		while (j < n && v[j] != ',' && v[j] != ' ' && v[j] != '\t')
			j++;
		if (j - i == tl && !strncasecmp(v + i, tok, tl))
			return true;
		i = j;
	}
	return false;
}

static int parse_length(const char *v, size_t n, long long *out)
{
	long long x = 0;

	if (n == 0 || n > 15)
		return 400;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return 400;
		x = x * 10 + (v[i] - '0');
	}
	if (*out >= 0 && *out != x)	/* differing duplicates */
		return 400;
	*out = x;
	return 0;
}

struct hdr_state {
	int hosts;
	bool close, keep;
};

static int parse_header(const char *s, size_t n, struct request *rq,
			struct hdr_state *h)
{
	const char *colon = memchr(s, ':', n), *v;
	size_t nlen, vlen;

	if (!colon || colon == s)
		return 400;
	nlen = (size_t)(colon - s);
	for (size_t i = 0; i < nlen; i++)
		if (!is_tchar((unsigned char)s[i]))
			return 400;
	v = colon + 1;
	vlen = (size_t)(s + n - v);
	while (vlen && (*v == ' ' || *v == '\t'))
		v++, vlen--;
	while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;
	for (size_t i = 0; i < vlen; i++)
		if (is_ctl((unsigned char)v[i]) && v[i] != '\t')
			return 400;
#define IS(name) (nlen == sizeof(name) - 1 && !strncasecmp(s, name, nlen))
	if (IS("host"))
		h->hosts++;
	else if (IS("connection")) {
		h->close |= has_token(v, vlen, "close");
		h->keep |= has_token(v, vlen, "keep-alive");
	} else if (IS("content-length"))
		return parse_length(v, vlen, &rq->content_length);
	else if (IS("transfer-encoding"))
		return 400;
#undef IS
	return 0;
}

int req_parse(const char *buf, size_t len, struct request *rq)
{
	const char *p = buf, *end = buf + len, *s;
	struct hdr_state h = { 0, false, false };
	bool known = false;
	size_t n;
	int st;

	memset(rq, 0, sizeof(*rq));
	rq->content_length = -1;
	s = next_line(&p, end, &n);
	if (!s)
		return 400;
	if ((st = parse_request_line(s, n, rq, &known)) != 0)
		return st;
	while ((s = next_line(&p, end, &n)) != NULL && n > 0) {
		if (s[0] == ' ' || s[0] == '\t')	/* obs-fold */
			return 400;
		if ((st = parse_header(s, n, rq, &h)) != 0)
			return st;
	}
	if (rq->minor == 1 && h.hosts != 1)
		return 400;
	if (rq->content_length < 0)
		rq->content_length = 0;
	rq->keep_alive = rq->minor == 1 ? !h.close : (h.keep && !h.close);
	return known ? 0 : 405;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes the path part of the target into out (NUL-terminated). */
static int decode(const char *t, size_t n, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < n && t[i] != '?' && t[i] != '#'; i++) {
		int c = (unsigned char)t[i];
		if (c == '%') {
			int hi = i + 2 < n ? hexval(t[i + 1]) : -1;
			int lo = hi >= 0 ? hexval(t[i + 2]) : -1;
			if (lo < 0)
				return 400;
			c = hi * 16 + lo;
			i += 2;
		}
		if (is_ctl((unsigned char)c))	/* includes %00 */
			return 400;
		if (o + 1 >= outlen)
			return 414;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* Normalizes the decoded path in place: the write position never passes
 * the read position, since separators and "." segments are only dropped. */
int req_path(const struct request *rq, char *out, size_t outlen)
{
	size_t r = 0, w = 0, n;
	int st = decode(rq->target, rq->target_len, out, outlen);

	if (st)
		return st;
	n = strlen(out);
	while (r < n) {
		size_t s = r, sl;
		while (r < n && out[r] != '/')
			r++;
		sl = r - s;
		r++;			/* past the '/' (or the end) */
		if (sl == 0 || (sl == 1 && out[s] == '.'))
			continue;
		if (sl == 2 && out[s] == '.' && out[s + 1] == '.')
			return 400;
		if (w)
			out[w++] = '/';
		memmove(out + w, out + s, sl);
		w += sl;
	}
	if (!w)
		out[w++] = '.';
	out[w] = '\0';
	return 0;
}

const char *req_mime(const char *path)
{
	static const char *const map[][2] = {
		{ "html", "text/html" }, { "htm", "text/html" },
		{ "txt", "text/plain" }, { "css", "text/css" },
		{ "js", "application/javascript" }, { "json", "application/json" },
		{ "xml", "application/xml" }, { "png", "image/png" },
		{ "jpg", "image/jpeg" }, { "jpeg", "image/jpeg" },
		{ "gif", "image/gif" }, { "svg", "image/svg+xml" },
		{ "ico", "image/x-icon" }, { "webp", "image/webp" },
		{ "pdf", "application/pdf" }, { "wasm", "application/wasm" },
	};
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

	if (dot && (!slash || dot > slash))
		for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (!strcasecmp(dot + 1, map[i][0]))
				return map[i][1];
	return "application/octet-stream";
}

const char *req_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Internal Server Error";
	}
}
