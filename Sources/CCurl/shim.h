#include <curl/curl.h>

/* curl_easy_setopt is variadic, which Swift cannot call: one fixed GET, over http or https only.
   The body is thrown away (at most 64 KiB read), no signals are used (a feed's threads keep
   theirs), redirects are not followed, and Basic or Digest credentials in the URL are answered as
   the server asks (CURLAUTH_ANY).
   Returns libcurl's code; `status` gets the HTTP status (0 when no answer came). */
/* Keeps nothing of the body and reads at most 64 KiB of it: only the status matters, and a
   camera's answer is a few bytes (a longer body ends the transfer: CURLE_WRITE_ERROR). */
static size_t spy_curl_discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    size_t *seen = (size_t *)user;
    *seen += size * count;
    return *seen > 65536 ? 0 : size * count;
}

static inline CURLcode spy_curl_get(const char *url, long timeout_ms, long *status) {
    *status = 0;
    CURL *c = curl_easy_init();
    if (!c) return CURLE_FAILED_INIT;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_ANY);
    size_t seen = 0;
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, spy_curl_discard);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &seen);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "spyglass");
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(c);
    return rc;
}
