/*
 * The C API of streamed point sets (gpu.h cuzk_gpu_points_host) and the MSM over one
 * (stream.cuh): part of gpu_core.cu, included after its MSM dispatch and msm_tab.
 */
#ifndef CUZK_GPU_STREAM_API_CUH
#define CUZK_GPU_STREAM_API_CUH

/* Points scanned for the map of points at infinity per host task (32 per map word). */
#define CUZK_GPU_STREAM_MAP_WORDS ((size_t)1 << 16)

struct stream_map_job {
    const uint8_t *host;
    size_t pb, lead, n, words;
    uint32_t *map;
    size_t *counts; /* per task */
};

static void stream_map_task(void *arg, size_t i)
{
    stream_map_job *j = (stream_map_job *)arg;
    const size_t w0 = i * CUZK_GPU_STREAM_MAP_WORDS,
                 w1 = w0 + CUZK_GPU_STREAM_MAP_WORDS < j->words ? w0 + CUZK_GPU_STREAM_MAP_WORDS
                                                                : j->words;
    j->counts[i] = cuzk_gpu_stream::inf_map_words(j->host, j->pb, j->lead, j->n, j->map, w0, w1);
}

cuzk_err cuzk_gpu_points_host(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                              size_t lead, const void *host, size_t n, size_t chunk_points,
                              cuzk_gpu_points **out, cuzk_errbuf *eb)
{
    *out = NULL;
    if (n >= 0x80000000u || lead >= 0x80000000u - n)
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "GPU point sets hold at most 2^31 - 1 points");
    if (chunk_points == 0)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "streamed GPU point set: chunks of 0 points");
    CU(cudaSetDevice(ctx->device));
    const size_t pb = cuzk_gpu_point_bytes(curve, g), total = lead + n;
    /* The map is made on the host (the points are there), then kept on the device as a
     * resident set's is, so that the chunks' MSMs drop the same entries. */
    const size_t words = (total + 31) / 32,
                 mb = ((size_t)cuzk__gpu_inf_map_bytes(total) + 7) & ~(size_t)7;
    const size_t tasks = (words + CUZK_GPU_STREAM_MAP_WORDS - 1) / CUZK_GPU_STREAM_MAP_WORDS;
    uint32_t *map = (uint32_t *)calloc(1, mb + 8);
    size_t *counts = (size_t *)calloc(tasks ? tasks : 1, sizeof *counts);
    cuzk_gpu_points *p = (cuzk_gpu_points *)calloc(1, sizeof *p);
    if (!map || !counts || !p) {
        free(map);
        free(counts);
        free(p);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "streamed GPU point set of %zu points", total);
    }
    stream_map_job j = {(const uint8_t *)host, pb, lead, n, words, map, counts};
    cuzk_parallel_for(tasks, 0, stream_map_task, &j);
    size_t n_inf = 0;
    for (size_t i = 0; i < tasks; i++)
        n_inf += counts[i];
    free(counts);
    cudaError_t e = cudaMalloc((void **)&p->inf_bits, mb + 8);
    if (e == cudaSuccess)
        e = cudaMemcpy(p->inf_bits, map, mb + 8, cudaMemcpyHostToDevice);
    free(map);
    if (e != cudaSuccess) {
        cudaGetLastError();
        cudaFree(p->inf_bits);
        free(p);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "streamed GPU point set: map of %zu points: %s",
                         total, cudaGetErrorString(e));
    }
    p->ctx = ctx;
    p->curve = curve;
    p->group = g;
    p->n = total;
    p->t = 1;
    p->s = 0;
    p->n_inf = n_inf;
    p->host = (const uint8_t *)host;
    p->lead = lead;
    p->chunk = chunk_points < total ? chunk_points : total ? total : 1;
    *out = p;
    return CUZK_OK;
}

int cuzk_gpu_points_streamed(const cuzk_gpu_points *pts) { return pts && pts->host; }

uint64_t cuzk_gpu_stream_buffer_bytes(const cuzk_gpu_ctx *ctx)
{
    return ctx && ctx->strm ? 2 * (uint64_t)ctx->strm->cap : 0;
}

/* outs + j * limbs = the MSM of scalar vector j (j < nb) over points [offset, offset + count)
 * of the streamed set pts, each chunk copied once for the nb MSMs (stream.cuh run_batch): the
 * vectors in host memory at hsc[0 .. nb - 1], their chunk slices copied beside the points, or
 * with hsc NULL one vector on the device at d_sc (n x 32 bytes, nb = 1). check: canonical
 * scalars checked (CUZK_GPU_SCALARS_CHECK), the index of a bad one in ctx->bad_scalar counted
 * from its vector's start. The chunks' preparations overwrite the scratch slots: ctx->prep is
 * not valid after. */
static cuzk_err stream_msm(cuzk_gpu_ctx *ctx, const cuzk_gpu_points *pts, size_t offset,
                           size_t count, size_t nb, const uint8_t *const *hsc,
                           const uint8_t *d_sc, bool mont, bool check, uint64_t *outs,
                           cuzk_errbuf *eb)
{
    const size_t pb = cuzk_gpu_point_bytes(pts->curve, pts->group);
    const cuzk_gpu_stream::view v = {pts->host, pts->lead, pb, pts->chunk};
    ctx->prep.valid = 0;
    TRY(cuzk_gpu_stream::ensure_bufs(&ctx->strm, pts->chunk * pb,
                                     hsc ? nb * pts->chunk * 32 : 0, ctx->stream, ctx->device,
                                     eb));
    const int g2 = pts->group == CUZK_GPU_G2;
    auto msm = [&](const void *d_pts, size_t set_lo, size_t len, size_t lo, size_t j,
                   const uint8_t *chunk_sc, uint64_t *part) -> cuzk_err {
        ctx->prep_reuse = false;
        ctx->prep_check = check;
        const cuzk__gpu_tab tab = msm_tab(pts, set_lo);
        cuzk_err e = msm_dispatch(ctx, pts->curve, pts->group, d_pts, len,
                                  hsc ? chunk_sc : d_sc + lo * 32, mont, &tab, part, eb);
        if (e == CUZK_NON_CANONICAL && ctx->bad_scalar != UINT64_MAX) {
            ctx->bad_scalar += lo; /* the index within the whole MSM */
            char of[48] = "";
            if (nb > 1)
                snprintf(of, sizeof of, " of vector %zu of the batch", j);
            e = cuzk_errf(eb, CUZK_NON_CANONICAL, "GPU MSM: scalar %llu%s is not below r",
                          (unsigned long long)ctx->bad_scalar, of);
        }
        return e;
    };
    auto add = [&](uint64_t *acc, const uint64_t *part) {
        cuzk__gpu_jac_add(pts->curve, g2, acc, part);
    };
    cuzk_err e = cuzk_gpu_stream::run_batch(ctx->strm, v, ctx->stream, offset, count,
                                            cuzk_gpu_point_limbs(pts->curve, pts->group), nb,
                                            hsc, msm, add, outs, eb);
    ctx->prep_reuse = false;
    ctx->prep_check = false;
    ctx->prep.valid = 0;
    return e;
}

cuzk_err cuzk_gpu_msm_batch(cuzk_gpu_ctx *ctx, const cuzk_gpu_points *pts, size_t offset,
                            size_t count, size_t nb, const void *const *scalars, unsigned flags,
                            uint64_t *outs, cuzk_errbuf *eb)
{
    const size_t limbs = cuzk_gpu_point_limbs(pts->curve, pts->group);
    if (offset > pts->n || count > pts->n - offset)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH, "GPU MSM of %zu points at %zu: the set has %zu",
                         count, offset, pts->n);
    if (!pts->host) {
        for (size_t j = 0; j < nb; j++) {
            cuzk_err e = cuzk_gpu_msm(ctx, pts, offset, count, scalars[j],
                                      flags & ~CUZK_GPU_SCALARS_SAME, outs + j * limbs, eb);
            if (e == CUZK_NON_CANONICAL && nb > 1) {
                char m[sizeof eb->msg];
                snprintf(m, sizeof m, "%s", eb->msg);
                return cuzk_errf(eb, e, "%s (vector %zu of the batch)", m, j);
            }
            if (e)
                return e;
        }
        return CUZK_OK;
    }
    CU(cudaSetDevice(ctx->device));
    const bool mont = (flags & CUZK_GPU_SCALARS_MONT) != 0;
    const bool check = (flags & CUZK_GPU_SCALARS_CHECK) && !mont;
    ctx->up.valid = 0; /* the scalar slot is not this batch's */
    if (check)
        ctx->bad_scalar = UINT64_MAX;
    double tt = now_ms();
    cuzk_err e = stream_msm(ctx, pts, offset, count, nb, (const uint8_t *const *)scalars, NULL,
                            mont, check, outs, eb);
    if (trace_on())
        fprintf(stderr, "[gpu %d] msm batch G%d n=%zu x %zu: %.2f ms (streamed, %zu chunks)\n",
                ctx->device, pts->group == CUZK_GPU_G2 ? 2 : 1, count, nb, trace_lap(ctx, &tt),
                cuzk_gpu_stream::chunks(count, pts->chunk));
    return e;
}

#endif
