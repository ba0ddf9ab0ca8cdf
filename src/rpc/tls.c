/* TLS credentials of the gRPC port with reload (see tls.h). */
#include "rpc/tls.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/auth.h"

struct cuzk_rpc_tls {
    pthread_mutex_t mu;
    char *cert_path, *key_path, *ca_path; /* ca_path NULL: server-only TLS */
    char *cert, *key, *ca;                /* PEM text in use; under mu */
    unsigned generation, served;          /* served: the generation gRPC has; under mu */
};

static cuzk_err read_all(const cuzk_rpc_tls *t, char **cert, char **key, char **ca,
                         cuzk_errbuf *eb)
{
    *cert = *key = *ca = NULL;
    cuzk_err e = cuzk_tls_read_pem("daemon.tls.cert", t->cert_path, 0, cert, eb);
    if (!e)
        e = cuzk_tls_read_pem("daemon.tls.key", t->key_path, 1, key, eb);
    if (!e && t->ca_path)
        e = cuzk_tls_read_pem("daemon.tls.client_ca", t->ca_path, 0, ca, eb);
    if (e) {
        free(*cert);
        free(*key);
        free(*ca);
        *cert = *key = *ca = NULL;
    }
    return e;
}

static void free_strings(cuzk_rpc_tls *t)
{
    free(t->cert);
    if (t->key) /* a private key: not left in freed memory */
        memset(t->key, 0, strlen(t->key));
    free(t->key);
    free(t->ca);
}

cuzk_err cuzk_rpc_tls_new(cuzk_rpc_tls **out, const char *cert, const char *key,
                          const char *client_ca, cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_rpc_tls *t = calloc(1, sizeof *t);
    if (!t)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    t->cert_path = strdup(cert);
    t->key_path = strdup(key);
    t->ca_path = client_ca && client_ca[0] ? strdup(client_ca) : NULL;
    cuzk_err e = !t->cert_path || !t->key_path || (client_ca && client_ca[0] && !t->ca_path)
                     ? cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory")
                     : read_all(t, &t->cert, &t->key, &t->ca, eb);
    if (e) {
        free(t->cert_path);
        free(t->key_path);
        free(t->ca_path);
        free(t);
        return e;
    }
    pthread_mutex_init(&t->mu, NULL);
    t->generation = 1;
    *out = t;
    return CUZK_OK;
}

/* gRPC calls this when it builds the server's TLS context and at every handshake. */
static grpc_ssl_certificate_config_reload_status fetch(void *ud,
                                                       grpc_ssl_server_certificate_config **cfg)
{
    cuzk_rpc_tls *t = ud;
    pthread_mutex_lock(&t->mu);
    grpc_ssl_certificate_config_reload_status st = GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
    if (t->served != t->generation) {
        grpc_ssl_pem_key_cert_pair kp = {t->key, t->cert};
        /* gRPC asserts that a fetched config has root certificates, even when it requests no
         * client certificate; without client_ca they are never used, so the chain stands in. */
        *cfg = grpc_ssl_server_certificate_config_create(t->ca ? t->ca : t->cert, &kp, 1);
        st = *cfg ? GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW
                  : GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_FAIL;
        if (*cfg)
            t->served = t->generation;
    }
    pthread_mutex_unlock(&t->mu);
    return st;
}

grpc_server_credentials *cuzk_rpc_tls_credentials(cuzk_rpc_tls *t)
{
    grpc_ssl_client_certificate_request_type req =
        t->ca_path ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                   : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
    grpc_ssl_server_credentials_options *o =
        grpc_ssl_server_credentials_create_options_using_config_fetcher(req, fetch, t);
    return o ? grpc_ssl_server_credentials_create_with_options(o) : NULL;
}

cuzk_err cuzk_rpc_tls_reload(cuzk_rpc_tls *t, cuzk_errbuf *eb)
{
    char *cert, *key, *ca;
    cuzk_err e = read_all(t, &cert, &key, &ca, eb);
    if (e)
        return e;
    pthread_mutex_lock(&t->mu);
    free_strings(t);
    t->cert = cert;
    t->key = key;
    t->ca = ca;
    t->generation++;
    pthread_mutex_unlock(&t->mu);
    return CUZK_OK;
}

void cuzk_rpc_tls_free(cuzk_rpc_tls *t)
{
    if (!t)
        return;
    free_strings(t);
    free(t->cert_path);
    free(t->key_path);
    free(t->ca_path);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
