/* Stand-in for the CUDA backend when it is not built (CUZK_CUDA=OFF or no nvcc): the same API,
 * reporting no device, so callers need no #ifdef. CMake drops this file when CUDA is built. */
#include "gpu/gpu.h"
#include "gpu/gpu_testing.h"

#define NOGPU(eb) \
    cuzk_errf(eb, CUZK_NO_DEVICE, "this cuzk was built without the CUDA backend (CUZK_CUDA=OFF)")

int cuzk_gpu_device_count(void) { return 0; }

cuzk_err cuzk_gpu_open(cuzk_gpu_ctx **out, int device, cuzk_errbuf *eb)
{
    (void)device;
    if (out)
        *out = NULL;
    return NOGPU(eb);
}

void cuzk_gpu_close(cuzk_gpu_ctx *ctx) { (void)ctx; }

const char *cuzk_gpu_name(const cuzk_gpu_ctx *ctx)
{
    (void)ctx;
    return "none";
}

cuzk_err cuzk_gpu_mem_info(int device, uint64_t *free_bytes, uint64_t *total_bytes,
                           cuzk_errbuf *eb)
{
    (void)device;
    *free_bytes = *total_bytes = 0;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_ba_fit(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, uint64_t n_points,
                         uint64_t domain, cuzk_errbuf *eb)
{
    (void)ctx, (void)curve, (void)n_points, (void)domain;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_ba_reset(cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    (void)ctx;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_ba_set(cuzk_gpu_ctx *ctx, uint64_t chunk, int quads, cuzk_errbuf *eb)
{
    (void)ctx, (void)chunk, (void)quads;
    return NOGPU(eb);
}

cuzk_err cuzk__gpu_test_set(cuzk_gpu_ctx *ctx, const cuzk__gpu_test_options *o, cuzk_errbuf *eb)
{
    (void)ctx, (void)o;
    return NOGPU(eb);
}

void cuzk_gpu_ba_setting(const cuzk_gpu_ctx *ctx, uint64_t *chunk, int *quads)
{
    (void)ctx;
    *chunk = 0;
    *quads = 0;
}

cuzk_err cuzk_gpu_pin(cuzk_gpu_ctx *ctx, void *p, size_t len, cuzk_errbuf *eb)
{
    (void)ctx, (void)p, (void)len;
    return NOGPU(eb);
}

void cuzk_gpu_unpin(cuzk_gpu_ctx *ctx, void *p) { (void)ctx, (void)p; }

cuzk_err cuzk_gpu_host_alloc(cuzk_gpu_ctx *ctx, size_t bytes, void **out, cuzk_errbuf *eb)
{
    (void)ctx, (void)bytes;
    *out = NULL;
    return NOGPU(eb);
}

void cuzk_gpu_host_free(cuzk_gpu_ctx *ctx, void *p) { (void)ctx, (void)p; }

cuzk_err cuzk_gpu_host_alloc_any(size_t bytes, void **out, cuzk_errbuf *eb)
{
    (void)bytes;
    *out = NULL;
    return NOGPU(eb);
}

void cuzk_gpu_host_free_any(void *p) { (void)p; }

int cuzk_gpu_host_is_pinned(const void *p)
{
    (void)p;
    return 0;
}

uint64_t cuzk_gpu_scratch_bytes(const cuzk_gpu_ctx *ctx)
{
    (void)ctx;
    return 0;
}

size_t cuzk_gpu_point_bytes(cuzk_gpu_curve curve, cuzk_gpu_group g)
{
    return (curve == CUZK_GPU_BN254 ? 64 : 96) * (g == CUZK_GPU_G2 ? 2 : 1);
}

size_t cuzk_gpu_point_limbs(cuzk_gpu_curve curve, cuzk_gpu_group g)
{
    return (curve == CUZK_GPU_BN254 ? 12 : 18) * (g == CUZK_GPU_G2 ? 2 : 1);
}

cuzk_err cuzk_gpu_points_upload(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                                const void *bytes, size_t n, cuzk_gpu_points **out,
                                cuzk_errbuf *eb)
{
    (void)ctx, (void)curve, (void)g, (void)bytes, (void)n;
    if (out)
        *out = NULL;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_points_upload_ex(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                                   size_t lead, const void *bytes, size_t n,
                                   cuzk_gpu_points **out, cuzk_errbuf *eb)
{
    (void)lead;
    return cuzk_gpu_points_upload(ctx, curve, g, bytes, n, out, eb);
}

cuzk_err cuzk_gpu_points_host(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                              size_t lead, const void *host, size_t n, size_t chunk_points,
                              cuzk_gpu_points **out, cuzk_errbuf *eb)
{
    (void)lead, (void)chunk_points;
    return cuzk_gpu_points_upload(ctx, curve, g, host, n, out, eb);
}
int cuzk_gpu_points_streamed(const cuzk_gpu_points *pts)
{
    (void)pts;
    return 0;
}
uint64_t cuzk_gpu_stream_buffer_bytes(const cuzk_gpu_ctx *ctx)
{
    (void)ctx;
    return 0;
}
void cuzk_gpu_points_free(cuzk_gpu_points *pts) { (void)pts; }
size_t cuzk_gpu_points_count(const cuzk_gpu_points *pts)
{
    (void)pts;
    return 0;
}
cuzk_err cuzk_gpu_scalars_stage(cuzk_gpu_ctx *ctx, const void *host, size_t n, size_t lo,
                                size_t hi, cuzk_errbuf *eb)
{
    (void)ctx, (void)host, (void)n, (void)lo, (void)hi;
    return NOGPU(eb);
}
cuzk_err cuzk_gpu_points_tables(cuzk_gpu_points *pts, int max_copies, cuzk_errbuf *eb)
{
    (void)pts, (void)max_copies;
    return NOGPU(eb);
}
int cuzk_gpu_points_copies(const cuzk_gpu_points *pts)
{
    (void)pts;
    return 0;
}
uint64_t cuzk_gpu_points_bytes(const cuzk_gpu_points *pts)
{
    (void)pts;
    return 0;
}

cuzk_err cuzk_gpu_msm(cuzk_gpu_ctx *ctx, const cuzk_gpu_points *pts, size_t offset,
                      size_t count, const void *scalars, unsigned flags, uint64_t *out,
                      cuzk_errbuf *eb)
{
    (void)ctx, (void)pts, (void)offset, (void)count, (void)scalars, (void)flags, (void)out;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_msm_batch(cuzk_gpu_ctx *ctx, const cuzk_gpu_points *pts, size_t offset,
                            size_t count, size_t nb, const void *const *scalars, unsigned flags,
                            uint64_t *outs, cuzk_errbuf *eb)
{
    (void)ctx, (void)pts, (void)offset, (void)count, (void)nb, (void)scalars, (void)flags;
    (void)outs;
    return NOGPU(eb);
}

uint64_t cuzk_gpu_bad_scalar(const cuzk_gpu_ctx *ctx)
{
    (void)ctx;
    return UINT64_MAX;
}

cuzk_err cuzk_gpu_sync(cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    (void)ctx;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_fr_alloc(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, size_t n, cuzk_gpu_fr **out,
                           cuzk_errbuf *eb)
{
    (void)ctx, (void)curve, (void)n;
    if (out)
        *out = NULL;
    return NOGPU(eb);
}

void cuzk_gpu_fr_free(cuzk_gpu_fr *v) { (void)v; }

cuzk_err cuzk_gpu_fr_upload(cuzk_gpu_fr *v, const void *host, size_t n, cuzk_errbuf *eb)
{
    (void)v, (void)host, (void)n;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_fr_download(cuzk_gpu_fr *v, void *host, size_t n, cuzk_errbuf *eb)
{
    (void)v, (void)host, (void)n;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_ntt(cuzk_gpu_fr *v, int logn, int dir, const void *shift, cuzk_errbuf *eb)
{
    (void)v, (void)logn, (void)dir, (void)shift;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_h(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, int logn, const void *a,
                    const void *b, const void *c, void *h_out, const cuzk_gpu_points *pts,
                    size_t offset, uint64_t *out, cuzk_errbuf *eb)
{
    (void)ctx, (void)curve, (void)logn, (void)a, (void)b, (void)c, (void)h_out, (void)pts;
    (void)offset, (void)out;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_rows_upload(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, size_t n_rows,
                              size_t n_signals, const uint64_t *const row_ptr[2],
                              const void *const rec[2], size_t rec_bytes, cuzk_gpu_rows **out,
                              cuzk_errbuf *eb)
{
    (void)ctx, (void)curve, (void)n_rows, (void)n_signals, (void)row_ptr, (void)rec,
        (void)rec_bytes;
    if (out)
        *out = NULL;
    return NOGPU(eb);
}

void cuzk_gpu_rows_free(cuzk_gpu_rows *rows) { (void)rows; }

size_t cuzk_gpu_rows_bytes(const cuzk_gpu_rows *rows)
{
    (void)rows;
    return 0;
}

cuzk_err cuzk_gpu_h_witness(cuzk_gpu_ctx *ctx, const cuzk_gpu_rows *rows, int logn,
                            const void *witness, unsigned flags, void *const abc_out[3],
                            const cuzk_gpu_points *pts, size_t offset, uint64_t *out,
                            cuzk_errbuf *eb)
{
    (void)ctx, (void)rows, (void)logn, (void)witness, (void)flags, (void)abc_out, (void)pts,
        (void)offset, (void)out;
    return NOGPU(eb);
}

double cuzk_gpu_last_synth_ms(const cuzk_gpu_ctx *ctx)
{
    (void)ctx;
    return 0;
}

cuzk_err cuzk_gpu_fixed_base_new(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                                 cuzk_gpu_fixed_base **out, cuzk_errbuf *eb)
{
    (void)ctx, (void)curve, (void)g;
    *out = NULL;
    return NOGPU(eb);
}

cuzk_err cuzk_gpu_fixed_base_mul(cuzk_gpu_fixed_base *fb, const void *scalars, size_t n,
                                 unsigned flags, void *out, cuzk_errbuf *eb)
{
    (void)fb, (void)scalars, (void)n, (void)flags, (void)out;
    return NOGPU(eb);
}

void cuzk_gpu_fixed_base_free(cuzk_gpu_fixed_base *fb) { (void)fb; }
