/*
 * request.h - HTTP/1.x request parsing for httpd, with no system calls:
 * finding the end of a request head, parsing the request line and the
 * few headers httpd cares about, and turning a request target into a
 * safe path relative to the served root.  See request.c.
 */
#ifndef HTTPD_REQUEST_H
#define HTTPD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#define HT_HEAD_MAX 8192	/* request line + headers, bytes */

struct request {
	bool head;		/* HEAD (else GET) */
	int minor;		/* HTTP/1.<minor>: 0 or 1 */
	bool keep_alive;	/* after the version's default and Connection */
	long long content_length; /* request body to discard; 0 if none */
	const char *target;	/* request target, not NUL-terminated */
	size_t target_len;
};

/* Skips empty lines in front of a request (RFC 9112 2.2); returns how
 * many bytes of buf to drop. */
size_t req_skip_blank(const char *buf, size_t len);

/* If buf[0..len) holds a whole request head (ending in an empty line, CRLF
 * or bare LF), returns its length including that empty line, else 0. */
size_t req_head_end(const char *buf, size_t len);

/* Parses the head buf[0..len) into *rq.  Returns 0, or the HTTP status to
 * answer with (400, 405, 505).  For 405 rq->keep_alive is valid. */
int req_parse(const char *buf, size_t len, struct request *rq);

/* Percent-decodes the path of the target (query and fragment dropped),
 * removes empty and "." segments and writes the path relative to the
 * root ("." for the root itself) to out[0..outlen).  Refuses ".."
 * segments, NUL and control bytes: returns 0 or the status (400, 414). */
int req_path(const struct request *rq, char *out, size_t outlen);

/* Content-Type for a file name, by extension. */
const char *req_mime(const char *path);

/* Reason phrase for a status code. */
const char *req_reason(int status);
#endif
