#include <stdbool.h>
#include <string.h>
#include <srt/srt.h>

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
