#include <stdbool.h>
#include <string.h>
#include <stdlib.h>
#include <srt/srt.h>
#include <srt/access_control.h>

/* srt_setsockflag takes an untyped pointer and a length: one typed form per option kind. */
static inline int spy_srt_set_int(SRTSOCKET s, SRT_SOCKOPT opt, int value) {
    return srt_setsockflag(s, opt, &value, (int)sizeof value);
}

static inline int spy_srt_set_bool(SRTSOCKET s, SRT_SOCKOPT opt, bool value) {
    return srt_setsockflag(s, opt, &value, (int)sizeof value);
}

static inline int spy_srt_set_string(SRTSOCKET s, SRT_SOCKOPT opt, const char *value) {
    return srt_setsockflag(s, opt, value, (int)strlen(value));
}

static inline int spy_srt_get_int(SRTSOCKET s, SRT_SOCKOPT opt) {
    int value = 0;
    int len = (int)sizeof value;
    return srt_getsockflag(s, opt, &value, &len) == SRT_ERROR ? -1 : value;
}

/* Waits up to `ms` for one socket's events (SRT_EPOLL_IN/OUT/ERR); returns what is ready (0: none). */
static inline int spy_srt_wait(int eid, SRTSOCKET s, int64_t ms) {
    SRT_EPOLL_EVENT ready[1];
    int n = srt_epoll_uwait(eid, ready, 1, ms);
    return n > 0 && ready[0].fd == s ? ready[0].events : 0;
}

/* A listener that takes only callers with one stream id (SRTO_STREAMID, sent by the caller in
   its handshake): any other is rejected with SRT_REJX_FORBIDDEN (1403, srt/access_control.h)
   before it is accepted. `wanted` must outlive the listener (spy_srt_accept_only copies it;
   free the returned copy after closing the listener). Returns the copy, or NULL on error. */
static int spy_srt_check_streamid(void *opaque, SRTSOCKET ns, int hsversion, const struct sockaddr *peer, const char *streamid) {
    (void)hsversion; (void)peer;
    if (streamid && strcmp(streamid, (const char *)opaque) == 0) return 0;
    srt_setrejectreason(ns, SRT_REJX_FORBIDDEN);
    return -1;
}

static inline char *spy_srt_accept_only(SRTSOCKET listener, const char *wanted) {
    char *copy = strdup(wanted);
    if (!copy) return NULL;
    if (srt_listen_callback(listener, spy_srt_check_streamid, copy) == SRT_ERROR) { free(copy); return NULL; }
    return copy;
}

/* The stream id a socket carries (a caller's, on an accepted socket), at most 512 bytes, into
   `out` (513 bytes); returns its length, or -1. */
static inline int spy_srt_get_streamid(SRTSOCKET s, char *out) {
    int len = 512;
    if (srt_getsockflag(s, SRTO_STREAMID, out, &len) == SRT_ERROR) return -1;
    out[len < 0 ? 0 : (len > 512 ? 512 : len)] = 0;
    return len;
}
