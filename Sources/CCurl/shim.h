#ifndef OCTUNNEL_CCURL_SHIM_H
#define OCTUNNEL_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot
   call: one typed inline wrapper per argument type octunnel passes (Push/Curl*.swift). */
static inline CURLcode octunnel_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode octunnel_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode octunnel_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode octunnel_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode octunnel_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
typedef size_t (*octunnel_curl_write_callback)(char *, size_t, size_t, void *);
static inline CURLcode octunnel_curl_setopt_write(CURL *handle, CURLoption option, octunnel_curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode octunnel_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
