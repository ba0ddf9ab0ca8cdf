/* A minimal HTTP/1.0 endpoint for Prometheus: GET /metrics answers the engine's metrics text,
 * anything else 404. One thread, one connection at a time (scrapes are rare and small), a
 * pipe to wake it for shutdown, and a 5 s limit on reading a request. With tokens
 * (metrics.require_token), a request needs `Authorization: Bearer TOKEN` of role read or up. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cuzk/log.h"
#include "rpc/server.h"

struct cuzk_metrics_http {
    cuzk_engine *engine;
    cuzk_auth *auth; /* NULL: open */
    int fd, wake[2];
    pthread_t th;
};

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* 1 when a header line "Authorization: Bearer TOKEN" names a token of role read or above. */
static int authorized(cuzk_auth *a, const char *req)
{
    static const char H[] = "authorization:";
    for (const char *l = strchr(req, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
        const char *p = l + 1;
        if (strncasecmp(p, H, sizeof H - 1) != 0)
            continue;
        p += sizeof H - 1;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, "\r\n");
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        char owner[CUZK_OWNER_ID_LEN];
        return cuzk_auth_check(a, p, n, owner) >= CUZK_ROLE_READ;
    }
    return 0;
}

static void serve(cuzk_metrics_http *m, int cfd)
{
    char req[2048];
    size_t len = 0;
    while (len < sizeof req - 1 && !memmem(req, len, "\r\n\r\n", 4) &&
           !memmem(req, len, "\n\n", 2)) {
        struct pollfd p = {cfd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            return;
        ssize_t r = recv(cfd, req + len, sizeof req - 1 - len, 0);
        if (r <= 0)
            return;
        len += (size_t)r;
    }
    req[len] = 0;
    char hdr[256];
    if (m->auth && !authorized(m->auth, req)) {
        const char *body = "unauthorized: send 'Authorization: Bearer TOKEN' (role read)\n";
        int n = snprintf(hdr, sizeof hdr,
                         "HTTP/1.0 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\n"
                         "Content-Type: text/plain\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n", strlen(body));
        write_all(cfd, hdr, (size_t)n);
        write_all(cfd, body, strlen(body));
        return;
    }
    if (strncmp(req, "GET /metrics ", 13) == 0 || strncmp(req, "GET /metrics?", 13) == 0) {
        char *t = cuzk_engine_metrics(m->engine);
        const char *body = t ? t : "";
        int n = snprintf(hdr, sizeof hdr,
                         "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n", strlen(body));
        write_all(cfd, hdr, (size_t)n);
        write_all(cfd, body, strlen(body));
        free(t);
    } else {
        const char *body = "not found: try GET /metrics\n";
        int n = snprintf(hdr, sizeof hdr,
                         "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n", strlen(body));
        write_all(cfd, hdr, (size_t)n);
        write_all(cfd, body, strlen(body));
    }
}

static void *metrics_main(void *arg)
{
    cuzk_metrics_http *m = arg;
    for (;;) {
        struct pollfd p[2] = {{m->fd, POLLIN, 0}, {m->wake[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        if (p[0].revents & POLLIN) {
            int cfd = accept(m->fd, NULL, NULL);
            if (cfd >= 0) {
                serve(m, cfd);
                close(cfd);
            }
        }
    }
    return NULL;
}

cuzk_err cuzk_metrics_http_start(cuzk_metrics_http **out, cuzk_engine *e, const char *addr,
                                 cuzk_auth *auth, char bound[256], cuzk_errbuf *eb)
{
    *out = NULL;
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "metrics.listen '%s': expected HOST:PORT", addr);
    char host[200];
    snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [::1]:9821 */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = 0;
    }
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gr = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
    if (gr)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "metrics.listen '%s': %s", addr, gai_strerror(gr));
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 16) < 0) {
        int er = errno;
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return cuzk_errf(eb, CUZK_IO, "metrics.listen '%s': %s", addr, strerror(er));
    }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int port = 0;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                        : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    snprintf(bound, 256, "%.*s:%d", (int)(colon - addr), addr, port);
    cuzk_metrics_http *m = calloc(1, sizeof *m);
    if (!m || pipe2(m->wake, O_CLOEXEC) < 0) {
        close(fd);
        free(m);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "cannot set up the metrics endpoint");
    }
    m->engine = e;
    m->auth = auth;
    m->fd = fd;
    if (pthread_create(&m->th, NULL, metrics_main, m) != 0) {
        close(fd);
        close(m->wake[0]);
        close(m->wake[1]);
        free(m);
        return cuzk_errf(eb, CUZK_INTERNAL, "cannot start the metrics thread");
    }
    *out = m;
    return CUZK_OK;
}

void cuzk_metrics_http_stop(cuzk_metrics_http *m)
{
    if (!m)
        return;
    char b = 1;
    if (write(m->wake[1], &b, 1) < 0) { /* the thread also ends when the pipe closes */
    }
    pthread_join(m->th, NULL);
    close(m->fd);
    close(m->wake[0]);
    close(m->wake[1]);
    free(m);
}
