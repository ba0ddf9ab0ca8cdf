/* A proving key's residency on one GPU device (pk_device.h). */
#include "groth16/pk_device.h"

void cuzk__pk_device_init(cuzk__pk_device *d)
{
    pthread_mutex_init(&d->mu, NULL);
}

void cuzk__pk_device_free(cuzk__pk_device *d)
{
    cuzk_gpu_points_free(d->g_a);
    cuzk_gpu_points_free(d->g_b1);
    cuzk_gpu_points_free(d->g_c);
    cuzk_gpu_points_free(d->g_h);
    cuzk_gpu_points_free(d->g_b2);
    cuzk_gpu_rows_free(d->g_rows);
    if (d->wpin)
        cuzk_gpu_host_free(d->ctx, d->wpin);
    cuzk_gpu_close(d->ctx);
    pthread_mutex_destroy(&d->mu);
}

uint32_t cuzk__pk_devices_mask(cuzk__pk_device devs[CUZK_MAX_DEVICES])
{
    uint32_t m = 0;
    for (int d = 0; d < CUZK_MAX_DEVICES; d++) {
        pthread_mutex_lock(&devs[d].mu);
        if (devs[d].g_h)
            m |= 1u << d;
        pthread_mutex_unlock(&devs[d].mu);
    }
    return m;
}

unsigned cuzk__pk_device_no_tables(const cuzk__pk_device *d, cuzk_gpu_curve curve)
{
    const cuzk_gpu_points *sets[5] = {d->g_b2, d->g_a, d->g_b1, d->g_c, d->g_h};
    static const unsigned bit[5] = {CUZK_PK_SET_B2, CUZK_PK_SET_A, CUZK_PK_SET_B1,
                                    CUZK_PK_SET_C, CUZK_PK_SET_H};
    unsigned m = 0;
    for (int i = 0; i < 5; i++) {
        if (!sets[i] || cuzk_gpu_points_copies(sets[i]) > 1 || cuzk_gpu_points_streamed(sets[i]))
            continue;
        const uint64_t n = cuzk_gpu_points_count(sets[i]);
        const cuzk_gpu_group g = i == 0 ? CUZK_GPU_G2 : CUZK_GPU_G1;
        if (cuzk_gpu_tables_bytes(curve, g, n, 0) > cuzk_gpu_tables_bytes(curve, g, n, 1))
            m |= bit[i];
    }
    return m;
}

void *cuzk__pk_device_wpin_take(cuzk__pk_device *d, int device, size_t bytes)
{
    void *p = NULL;
    cuzk_errbuf eb = {{0}};
    pthread_mutex_lock(&d->mu);
    if (!d->wpin_busy && (d->ctx || cuzk_gpu_open(&d->ctx, device, &eb) == CUZK_OK)) {
        if (d->wpin && d->wpin_len < bytes) {
            cuzk_gpu_host_free(d->ctx, d->wpin);
            d->wpin = NULL;
            d->wpin_len = 0;
        }
        if (!d->wpin && cuzk_gpu_host_alloc(d->ctx, bytes, &d->wpin, &eb) == CUZK_OK)
            d->wpin_len = bytes;
        if (d->wpin) {
            d->wpin_busy = 1;
            p = d->wpin;
        }
    }
    pthread_mutex_unlock(&d->mu);
    return p;
}

void cuzk__pk_device_wpin_give(cuzk__pk_device *d, void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&d->mu);
    d->wpin_busy = 0;
    pthread_mutex_unlock(&d->mu);
}
