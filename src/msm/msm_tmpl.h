/*
 * Pippenger multi-scalar multiplication, written once and instantiated per group in msm.c.
 *
 * Parameters: MSM_G (group prefix: bn254_g1 ...), MSM_F (its coordinate field: bn254_fp,
 * bn254_fp2 ...), MSM_FR (scalar field prefix: bn254_fr ...), MSM_NBITS (bit length of r:
 * 254 | 255), MSM_RLIMBS (initializer of r's limbs); for groups over Fp2 = Fp[u]/(u^2 + 1),
 * MSM_FP2_BASE (the prefix of Fp: bn254_fp ...) makes the batched inversions run over norms
 * in Fp (msm_chain_push).
 *
 * Outline (Bernstein et al., "Faster batch forgery identification", and the signed-digit
 * bucket method as in Bootle et al. / the ZPrize MSM write-ups):
 *  1. Classify scalars: 0 is skipped, the points with scalar 1 are summed directly (real
 *     witnesses are mostly 0/1) by a tree of batch-affine additions (one inversion per level
 *     by Montgomery's trick, about 5M + 1S per addition instead of 8M + 2S in XYZZ);
 *     everything else is listed for the bucket method.
 *  2. Each scalar k < 2^MSM_NBITS is recoded into W = floor(NBITS / c) + 1 signed digits
 *     d_w in [-2^(c-1), 2^(c-1)] (radix-2^c Booth recoding, computed per window independently
 *     from c + 1 overlapping bits, so windows are independent tasks): d_w = S_w + b_{cw-1}
 *     - 2^c b_{cw+c-1}, S_w the c bits at cw. c W >= NBITS + 1 keeps the top digit's sign bit
 *     zero, so no carry leaves the last window.
 *  3. Per window w and chunk of points: 2^(c-1) buckets; point i goes to bucket |d|-1
 *     (negated for d < 0). The points are counting-sorted by bucket into a private affine
 *     array, and each bucket's list is summed by rounds of pairwise affine additions, all
 *     additions of a round sharing one field inversion (msm_affine_round: ~5M + 1S per
 *     addition instead of 8M + 2S for a mixed XYZZ addition). Bucket sum sum_b (b+1) B_b
 *     over a sqrt(nb) x sqrt(nb) grid of the buckets (msm_grid_sum: row and column sums by
 *     the same batch-affine rounds, running sums in XYZZ only over rows and columns), or by
 *     the running sum over all buckets (2 XYZZ additions per bucket) where the grid's copies
 *     do not fit. A window of more than MSM_AFFINE_MAX points is cut into chunks of at most
 *     that many, each sorted and summed on its own.
 *  4. Windows are combined by Horner's rule (c doublings between windows).
 * Threads: (window, chunk) tasks from an atomic counter; each thread owns one scratch set.
 */
#ifndef MSM_TAB_MAX_C
#define MSM_TAB_MAX_C 20 /* widest window of a fixed-base table (2^19 buckets per thread) */
#endif

#define MSN_(a, b) a##_##b
#define MSN(a, b) MSN_(a, b)
#define MG_(x) MSN(MSM_G, x)
#define MR_(x) MSN(MSM_FR, x)
#define MF_(x) MSN(MSM_F, x)
#define MFT MF_(t)
/* The field of the batched-inversion product chains: Fp for G2 (MSM_FP2_BASE), else F. */
#ifdef MSM_FP2_BASE
#define MC_(x) MSN(MSM_FP2_BASE, x)
#else
#define MC_(x) MF_(x)
#endif
#define MCT MC_(t)

typedef struct {
    const MG_(affine) *points;
    const uint8_t *scalars; /* 32-byte canonical little-endian */
    size_t n;
    uint32_t *idx;          /* classification: per-chunk lists of non-0/1 indices */
    uint32_t *one_idx;      /* classification: per-chunk lists of indices with scalar 1 */
    size_t *cnt;            /* per classification chunk: count of listed indices */
    MG_(xyzz) *ones;        /* per classification chunk: sum of points with scalar 1 */
    size_t cls_chunk;       /* classification chunk length */
    atomic_int bad;         /* a scalar >= r was seen */
    /* bucket phase */
    size_t m;               /* listed indices after compaction */
    unsigned c, nwin, nchunks;
    size_t chunk_cap;       /* most points in one (window, chunk) task */
    size_t min_pairs;       /* affine rounds run while at least this many pairs remain */
    /* per bucket thread: chunk_cap sorted points, chunk_cap / 2 + 1 inverses, chunk_cap
     * digits, 2^(c-1) + 1 bucket starts, 2^(c-1) bucket lengths */
    MG_(affine) *spts;
    MFT *sscr;
    uint32_t *sdig, *sstart, *slen;
    MG_(jac) *partial;      /* nwin * nchunks window sums */
    /* Fixed-base tables (msm_tab): copy j >= 1 of point i is tab[(j - 1) n + i] =
     * 2^(j c nwin) P_i; window w of the scalar goes to copy w / nwin at local window
     * w % nwin, so only nwin windows are reduced. The plain MSM has ncopy = 1, wtot = nwin. */
    const MG_(affine) *tab;
    unsigned ncopy, wtot;
    atomic_uint next;
    /* Montgomery conversion */
    const uint8_t *mont_in;
    uint8_t *canon;
} MG_(msm_ctx);

static inline void MG_(msm_load)(uint64_t k[4], const uint8_t *s)
{
    memcpy(k, s, 32); /* little-endian host (x86-64, aarch64) */
}

static inline int MG_(msm_lt_r)(const uint64_t k[4])
{
    static const uint64_t r[4] = MSM_RLIMBS;
    for (int i = 3; i >= 0; i--) {
        if (k[i] != r[i])
            return k[i] < r[i];
    }
    return 0;
}

static void MG_(msm_mont_task)(void *arg, size_t i)
{
    MG_(msm_ctx) *cx = arg;
    size_t lo = i * 4096, hi = lo + 4096 < cx->n ? lo + 4096 : cx->n;
    for (size_t j = lo; j < hi; j++) {
        MR_(t) x;
        uint64_t k[4];
        memcpy(x.l, cx->mont_in + 32 * j, 32);
        if (!MG_(msm_lt_r)(x.l)) {
            atomic_store(&cx->bad, 1);
            memset(k, 0, sizeof k);
        } else {
            MR_(to_canonical)(k, &x);
        }
        memcpy(cx->canon + 32 * j, k, 32);
    }
}

/* Montgomery's batched inversion, split per element into a forward mark and push (for the
 * nonzero denominators d only) and a backward pop, with the slot (one element of F) that holds
 * the running prefix between them. Over Fp2 = Fp[u]/(u^2 + 1) the chain runs over the norms
 * N(d) = d0^2 + d1^2 in Fp instead, as 1/d = conj(d) / N(d) (N(d) != 0 for d != 0: -1 is a
 * non-residue mod p = 3 mod 4): per element 3 Fp multiplications, 2 squarings and 2
 * multiplications for the conjugate instead of 3 Fp2 multiplications (each about 3.3 Fp
 * multiplications in the x86-64 kernels). The slot keeps the prefix in c0 and N(d) in c1, so
 * the scratch stays one F element per pair.
 * mark: slot <- prefix (any element may be marked; only pushed ones are popped). */
static inline void MG_(msm_chain_mark)(MFT *slot, const MCT *acc)
{
#ifdef MSM_FP2_BASE
    slot->c0 = *acc;
#else
    *slot = *acc;
#endif
}

/* push, after mark: acc <- acc * key(d). */
static inline void MG_(msm_chain_push)(MFT *slot, MCT *acc, const MFT *d)
{
#ifdef MSM_FP2_BASE
    MCT t;
    MC_(sqr)(&slot->c1, &d->c0);
    MC_(sqr)(&t, &d->c1);
    MC_(add)(&slot->c1, &slot->c1, &t);
    MC_(mul)(acc, acc, &slot->c1);
#else
    (void)slot;
    MC_(mul)(acc, acc, d);
#endif
}

/* pop, walking the pushes backward with acc = 1 / (product of the keys pushed so far):
 * slot <- 1 / d, acc <- acc * key(d). */
static inline void MG_(msm_chain_pop)(MFT *slot, MCT *acc, const MFT *d)
{
#ifdef MSM_FP2_BASE
    MCT n, t;
    MC_(mul)(&n, &slot->c0, acc); /* 1 / N(d) */
    MC_(mul)(acc, acc, &slot->c1);
    MC_(mul)(&slot->c0, &d->c0, &n);
    MC_(mul)(&t, &d->c1, &n);
    MC_(neg)(&slot->c1, &t);
#else
    MC_(mul)(slot, slot, acc);
    MC_(mul)(acc, acc, d);
#endif
}

/* Sum of the m affine points in pts (overwritten) by pairwise batch-affine additions: each
 * level halves the count with one inversion. Per pair (P1, P2): infinity on either side gives
 * the other; x1 != x2: lambda = (y2 - y1) / (x2 - x1); P1 = P2 (y != 0): lambda = 3 x1^2 / 2 y1;
 * P1 = -P2: infinity. x3 = lambda^2 - x1 - x2, y3 = lambda (x1 - x3) - y1. scr: m / 2 field
 * elements. The last few points are added in XYZZ. */
static void MG_(msm_tree_sum)(MG_(xyzz) *out, MG_(affine) *pts, size_t m, MFT *scr)
{
    while (m > 8) {
        size_t h = m / 2;
        MFT d, t;
        MCT acc;
        MC_(set_one)(&acc);
        /* Pass 1: prefix products of the denominators (pairs needing none are skipped). */
        for (size_t i = 0; i < h; i++) {
            const MG_(affine) *a = &pts[2 * i], *b = &pts[2 * i + 1];
            MG_(msm_chain_mark)(&scr[i], &acc);
            if (MG_(affine_is_inf)(a) || MG_(affine_is_inf)(b))
                continue;
            MF_(sub)(&d, &b->x, &a->x);
            if (MF_(is_zero)(&d)) {
                if (!MF_(eq)(&a->y, &b->y))
                    continue; /* P + (-P) */
                MF_(dbl)(&d, &a->y);
            }
            MG_(msm_chain_push)(&scr[i], &acc, &d);
        }
        MC_(inv)(&acc, &acc);
        /* Pass 2 (backward): scr[i] <- 1 / d_i. */
        for (size_t i = h; i-- > 0;) {
            const MG_(affine) *a = &pts[2 * i], *b = &pts[2 * i + 1];
            if (MG_(affine_is_inf)(a) || MG_(affine_is_inf)(b))
                continue;
            MF_(sub)(&d, &b->x, &a->x);
            if (MF_(is_zero)(&d)) {
                if (!MF_(eq)(&a->y, &b->y))
                    continue;
                MF_(dbl)(&d, &a->y);
            }
            MG_(msm_chain_pop)(&scr[i], &acc, &d);
        }
        /* Pass 3 (forward, so pts[i] is written after pts[2i], pts[2i+1] were read). */
        for (size_t i = 0; i < h; i++) {
            MG_(affine) a = pts[2 * i], b = pts[2 * i + 1];
            if (MG_(affine_is_inf)(&a)) {
                pts[i] = b;
                continue;
            }
            if (MG_(affine_is_inf)(&b)) {
                pts[i] = a;
                continue;
            }
            MFT lam, x3;
            MF_(sub)(&d, &b.x, &a.x);
            if (MF_(is_zero)(&d)) {
                if (!MF_(eq)(&a.y, &b.y)) {
                    MG_(affine_set_inf)(&pts[i]);
                    continue;
                }
                MF_(sqr)(&t, &a.x);
                MF_(dbl)(&lam, &t);
                MF_(add)(&t, &lam, &t);
            } else {
                MF_(sub)(&t, &b.y, &a.y);
            }
            MF_(mul)(&lam, &t, &scr[i]);
            MF_(sqr)(&x3, &lam);
            MF_(sub)(&x3, &x3, &a.x);
            MF_(sub)(&x3, &x3, &b.x);
            MF_(sub)(&t, &a.x, &x3);
            MF_(mul)(&t, &lam, &t);
            MF_(sub)(&pts[i].y, &t, &a.y);
            pts[i].x = x3;
        }
        if (m & 1)
            pts[h] = pts[m - 1];
        m = h + (m & 1);
    }
    MG_(xyzz_set_inf)(out);
    for (size_t i = 0; i < m; i++)
        MG_(xyzz_add_affine)(out, out, &pts[i]);
}

static void MG_(msm_classify_task)(void *arg, size_t t)
{
    MG_(msm_ctx) *cx = arg;
    size_t lo = t * cx->cls_chunk, hi = lo + cx->cls_chunk < cx->n ? lo + cx->cls_chunk : cx->n;
    size_t c = 0, c1 = 0;
    for (size_t i = lo; i < hi; i++) {
        uint64_t k[4];
        MG_(msm_load)(k, cx->scalars + 32 * i);
        uint64_t hi3 = k[1] | k[2] | k[3];
        if (!hi3 && k[0] <= 1) {
            if (k[0] == 1)
                cx->one_idx[lo + c1++] = (uint32_t)i;
            continue;
        }
        if (!MG_(msm_lt_r)(k)) {
            atomic_store(&cx->bad, 1);
            continue;
        }
        if (MG_(affine_is_inf)(&cx->points[i]))
            continue; /* the bucket rounds then start from finite points only */
        cx->idx[lo + c++] = (uint32_t)i;
    }
    cx->cnt[t] = c;
    /* Points with scalar 1: batch-affine tree on a private copy, or XYZZ additions when the
     * copy cannot be allocated (same result, slower). */
    MG_(xyzz) acc;
    MG_(affine) *cp = c1 > 8 ? malloc(sizeof(MG_(affine)) * c1) : NULL;
    MFT *scr = cp ? malloc(sizeof(MFT) * (c1 / 2)) : NULL;
    if (cp && scr) {
        for (size_t j = 0; j < c1; j++)
            cp[j] = cx->points[cx->one_idx[lo + j]];
        MG_(msm_tree_sum)(&acc, cp, c1, scr);
    } else {
        MG_(xyzz_set_inf)(&acc);
        for (size_t j = 0; j < c1; j++)
            MG_(xyzz_add_affine)(&acc, &acc, &cx->points[cx->one_idx[lo + j]]);
    }
    free(cp);
    free(scr);
    cx->ones[t] = acc;
}

/* Signed Booth digit of window w (c <= 24): bits cw-1 .. cw+c-1 of k, d = ((t+1) >> 1) -
 * 2^c * t_c (see the header comment). Bits beyond 256 read as zero. */
static inline int32_t MG_(msm_digit)(const uint64_t k[4], unsigned w, unsigned c)
{
    uint64_t t, mask = ((uint64_t)1 << (c + 1)) - 1;
    if (w == 0) {
        t = (k[0] << 1) & mask;
    } else {
        unsigned pos = c * w - 1, li = pos >> 6, sh = pos & 63;
        if (li >= 4)
            return 0;
        t = k[li] >> sh;
        if (sh + c + 1 > 64 && li + 1 < 4)
            t |= k[li + 1] << (64 - sh);
        t &= mask;
    }
    return (int32_t)((t + 1) >> 1) - (int32_t)((t >> c) << c);
}

static inline int32_t MG_(msm_digit_at)(const MG_(msm_ctx) *cx, uint32_t i, unsigned w)
{
    uint64_t k[4];
    MG_(msm_load)(k, cx->scalars + 32 * (size_t)i);
    return MG_(msm_digit)(k, w, cx->c);
}

/* Denominator of the affine sum a + b (neither at infinity) into *d: x_b - x_a, or 2 y_a when
 * a = b. Returns 0 when no inversion is needed (a = -b: the sum is infinity). Points of the
 * prime-order groups here have y != 0 (no 2-torsion), so 2 y_a is invertible. */
static inline int MG_(msm_pair_den)(MFT *d, const MG_(affine) *a, const MG_(affine) *b)
{
    MF_(sub)(d, &b->x, &a->x);
    if (!MF_(is_zero)(d))
        return 1;
    if (!MF_(eq)(&a->y, &b->y))
        return 0;
    MF_(dbl)(d, &a->y);
    return 1;
}

/* r = a + b in affine coordinates given inv = 1 / msm_pair_den(a, b) (a, b finite, a != -b):
 * lambda = (y_b - y_a) inv, or 3 x_a^2 inv when a = b; x3 = lambda^2 - x_a - x_b,
 * y3 = lambda (x_a - x3) - y_a. r may alias a or b. Kept out of line: the round loop stays
 * small, which measured a few per cent faster on G1 and G2. */
static __attribute__((noinline)) void MG_(msm_pair_add)(MG_(affine) *r, const MG_(affine) *a,
                                                        const MG_(affine) *b, const MFT *inv)
{
    MFT lam, x3, t;
    if (MF_(eq)(&a->x, &b->x)) { /* a = b (a = -b never gets here) */
        MF_(sqr)(&t, &a->x);
        MF_(dbl)(&lam, &t);
        MF_(add)(&t, &lam, &t);
    } else {
        MF_(sub)(&t, &b->y, &a->y);
    }
    MF_(mul)(&lam, &t, inv);
    MF_(sqr)(&x3, &lam);
    MF_(sub)(&x3, &x3, &a->x);
    MF_(sub)(&x3, &x3, &b->x);
    MF_(sub)(&t, &a->x, &x3);
    MF_(mul)(&t, &lam, &t);
    MF_(sub)(&r->y, &t, &a->y);
    r->x = x3;
}

/* Rounds stop once fewer pairs than this remain: one inversion (~1.5 log p multiplications)
 * then costs more than it saves over adding the leftovers in XYZZ (about 4M per addition).
 * CUZK__MSM_ALL_ROUNDS (tests) lowers it to 1. */
#ifndef MSM_MIN_PAIRS
#define MSM_MIN_PAIRS 64
#endif

/* Lookahead of the bucket rounds' prefetches (points ahead, in the direction of the pass):
 * every round streams the sorted copy (several MiB, beyond L2) forward in pass 1 and
 * backward in pass 2, the pairs st points apart. Computed as integers: the address may lie
 * outside the copy (a prefetch never faults). */
#define MSM_ROUND_PF 8
/* Lookahead of the counting sort's prefetches (points ahead). */
#ifndef MSM_SORT_PF
#define MSM_SORT_PF 8
#endif

/* One round of the bucket reduction (the "batch-affine" bucket method, as in Aranha et al.,
 * "Faster multi-scalar multiplication for pairing-friendly curves" / gnark-crypto, but with the
 * points of each bucket sorted contiguously so that no two additions of a round touch the
 * same output and no conflict queue is needed): bucket b holds len[b] affine points
 * pts[start[b] + j st], j < len[b] (st = 2^round: each round leaves its sums in place at
 * the first point of each pair, so no compaction pass is needed, and an odd last point is
 * already where the next round expects it). Every pair (2q, 2q + 1) is replaced by its sum,
 * all the round's denominators sharing one inversion (Montgomery's trick); a bucket of length
 * L becomes ceil(L / 2) long. scr holds one field element per pair. *has_inf says whether
 * some listed point may be infinity (only a P + (-P) of an earlier round makes one); it is
 * updated for the next round. Returns the number of pairs of the next round. Kept out of
 * line: inlined, it grew msm_bucket_thread past GCC's inlining limits and the field products
 * went through their out-of-line wrappers (BLS12-381 G1 at 2^14 points, 1 thread: 1.5%
 * slower). */
static __attribute__((noinline)) size_t MG_(msm_affine_round)(MG_(affine) *pts,
                                                             const uint32_t *start,
                                                             uint32_t *len, size_t nb,
                                                             size_t st, MFT *scr, int *has_inf)
{
    const int inf = *has_inf;
    int made_inf = 0;
    size_t np = 0, next = 0;
    /* Two interleaved product chains (even and odd pairs): consecutive multiplications are
     * independent, so they overlap in the pipeline (a few per cent on G2). */
    MCT acc2[2];
    MFT d;
    MC_(set_one)(&acc2[0]);
    MC_(set_one)(&acc2[1]);
    /* Pass 1: prefix products of the denominators (pairs needing none are skipped). */
    for (size_t b = 0; b < nb; b++) {
        const MG_(affine) *s = pts + start[b];
        for (size_t i = 0; i + 1 < len[b]; i += 2) {
            const MG_(affine) *p = &s[i * st], *q = &s[(i + 1) * st];
            __builtin_prefetch((const void *)((uintptr_t)q + MSM_ROUND_PF * st * sizeof *q));
            MCT *acc = &acc2[np & 1];
            MFT *slot = &scr[np++];
            MG_(msm_chain_mark)(slot, acc);
            if ((inf && (MG_(affine_is_inf)(p) || MG_(affine_is_inf)(q))) ||
                !MG_(msm_pair_den)(&d, p, q))
                continue;
            MG_(msm_chain_push)(slot, acc, &d);
        }
    }
    {
        /* one inversion for both chains: 1/a0 = a1 / (a0 a1), 1/a1 = a0 / (a0 a1) */
        MCT tot, t0;
        MC_(mul)(&tot, &acc2[0], &acc2[1]);
        MC_(inv)(&tot, &tot);
        MC_(mul)(&t0, &tot, &acc2[1]);
        MC_(mul)(&acc2[1], &tot, &acc2[0]);
        acc2[0] = t0;
    }
    /* Pass 2 (backward): 1 / d_k = prefix_k * acc, then the sum into the pair's first slot
     * (which no earlier pair reads). */
    size_t k = np;
    for (size_t b = nb; b-- > 0;) {
        MG_(affine) *s = pts + start[b];
        uint32_t L = len[b];
        for (size_t i = L & ~1u; i >= 2; i -= 2) {
            MG_(affine) *p = &s[(i - 2) * st];
            __builtin_prefetch((const void *)((uintptr_t)p - MSM_ROUND_PF * st * sizeof *p), 1);
            const MG_(affine) *q = &s[(i - 1) * st];
            MCT *acc = &acc2[--k & 1];
            if (inf && MG_(affine_is_inf)(p)) {
                *p = *q;
                continue;
            }
            if (inf && MG_(affine_is_inf)(q))
                continue;
            if (!MG_(msm_pair_den)(&d, p, q)) {
                MG_(affine_set_inf)(p); /* P + (-P) */
                made_inf = 1;
                continue;
            }
            MG_(msm_chain_pop)(&scr[k], acc, &d);
            MG_(msm_pair_add)(p, p, q, &scr[k]);
        }
        len[b] = (L + 1) / 2;
        next += len[b] / 2;
    }
    *has_inf = inf | made_inf;
    return next;
}

/* Bucket sum sum_b (b + 1) B_b over a grid of the nb = H L buckets (b = hi L + lo): with the
 * row sums T_hi = sum_lo B_(hi L + lo) and the column sums S_lo = sum_hi B_(hi L + lo),
 * sum_b (b + 1) B_b = sum_lo (lo + 1) S_lo + L sum_hi hi T_hi. Rows and columns are plain sums
 * of the buckets' remaining affine points, made by the batch-affine rounds (about 6M per
 * addition, every point added twice), so only H + L ~ 2 sqrt(nb) terms go through the running
 * sums in XYZZ (about 24M per term) instead of all nb buckets. The buckets' points (len[b] at
 * pts[start[b] + i st]) are gathered row-major into pts[0, ne) and column-major into
 * pts[ne, 2 ne); start and len are then reused for the H + L groups. Returns 0, having changed
 * nothing, when the two copies do not fit the cap points of pts or the window is below 7 bits
 * (the caller then sums the buckets one by one). */
static __attribute__((noinline)) int MG_(msm_grid_sum)(MG_(xyzz) *out, MG_(affine) *pts,
                                                      uint32_t *start, uint32_t *len, size_t nb,
                                                      size_t st, size_t cap, MFT *scr,
                                                      int has_inf, size_t min_pairs, unsigned c)
{
    if (c < 7 || c > 24)
        return 0;
    const unsigned lb = (c - 1) / 2;
    const size_t L = (size_t)1 << lb, H = nb >> lb;
    size_t ne = 0;
    for (size_t b = 0; b < nb; b++)
        ne += len[b];
    if (2 * ne > cap)
        return 0;
    /* Row-major gather, dropping infinities: a point never moves up (what the buckets
     * before b keep is at most what they held), so nothing is overwritten before it is read. */
    ne = 0;
    for (size_t b = 0; b < nb; b++) {
        const MG_(affine) *s = pts + start[b];
        uint32_t kept = 0;
        for (size_t i = 0; i < len[b]; i++) {
            const MG_(affine) *q = &s[i * st];
            if (has_inf && MG_(affine_is_inf)(q))
                continue;
            pts[ne + kept++] = *q;
        }
        len[b] = kept;
        ne += kept;
    }
    /* Column-major copy behind it (lb <= 11 for c <= 24). */
    uint32_t colend[(size_t)1 << 11];
    memset(colend, 0, sizeof(uint32_t) * L);
    for (size_t b = 0; b < nb; b++)
        colend[b & (L - 1)] += len[b];
    size_t acc = ne;
    for (size_t lo = 0; lo < L; lo++) {
        size_t cnt = colend[lo];
        colend[lo] = (uint32_t)acc; /* the column's next slot */
        acc += cnt;
    }
    for (size_t b = 0, k = 0; b < nb; b++) {
        uint32_t *dst = &colend[b & (L - 1)];
        for (uint32_t j = 0; j < len[b]; j++)
            pts[(*dst)++] = pts[k++];
    }
    /* Groups: row hi at [start[hi], + len[hi]), column lo at group H + lo. Row hi is written
     * after buckets hi L .. hi L + L - 1 were read (hi <= hi L). */
    size_t off = 0, np = 0;
    for (size_t hi = 0; hi < H; hi++) {
        uint32_t n = 0;
        for (size_t lo = 0; lo < L; lo++)
            n += len[hi * L + lo];
        start[hi] = (uint32_t)off;
        len[hi] = n;
        off += n;
        np += n / 2;
    }
    for (size_t lo = 0; lo < L; lo++) {
        uint32_t s0 = lo ? colend[lo - 1] : (uint32_t)ne;
        start[H + lo] = s0;
        len[H + lo] = colend[lo] - s0;
        np += len[H + lo] / 2;
    }
    int ginf = 0;
    size_t gst = 1;
    for (; np >= min_pairs && np; gst *= 2)
        np = MG_(msm_affine_round)(pts, start, len, H + L, gst, scr, &ginf);
    /* sum_lo (lo + 1) S_lo and sum_hi hi T_hi by running sums; the second times L. */
    MG_(xyzz) run, tot, run2, tot2;
    MG_(xyzz_set_inf)(&run);
    MG_(xyzz_set_inf)(&tot);
    MG_(xyzz_set_inf)(&run2);
    MG_(xyzz_set_inf)(&tot2);
    for (size_t lo = L; lo-- > 0;) {
        for (size_t i = 0; i < len[H + lo]; i++)
            MG_(xyzz_add_affine)(&run, &run, &pts[start[H + lo] + i * gst]);
        MG_(xyzz_add)(&tot, &tot, &run);
    }
    for (size_t hi = H; hi-- > 1;) {
        for (size_t i = 0; i < len[hi]; i++)
            MG_(xyzz_add_affine)(&run2, &run2, &pts[start[hi] + i * gst]);
        MG_(xyzz_add)(&tot2, &tot2, &run2);
    }
    for (unsigned i = 0; i < lb; i++)
        MG_(xyzz_dbl)(&tot2, &tot2);
    MG_(xyzz_add)(out, &tot, &tot2);
    return 1;
}

static void MG_(msm_bucket_thread)(void *arg, unsigned t, unsigned T)
{
    (void)T;
    MG_(msm_ctx) *cx = arg;
    const size_t nb = (size_t)1 << (cx->c - 1);
    const size_t cap = cx->chunk_cap;
    MG_(affine) *pts = cx->spts + (size_t)t * cap;
    MFT *scr = cx->sscr + (size_t)t * (cap / 2 + 1);
    uint32_t *dig = cx->sdig + (size_t)t * cap;
    uint32_t *start = cx->sstart + (size_t)t * (nb + 1);
    uint32_t *len = cx->slen + (size_t)t * nb;
    const unsigned ntasks = cx->nwin * cx->nchunks;
    for (;;) {
        unsigned task = atomic_fetch_add(&cx->next, 1);
        if (task >= ntasks)
            return;
        unsigned w = task / cx->nchunks, ch = task % cx->nchunks;
        /* The task's virtual points: (copy j, listed index) for the copies whose window
         * j nwin + w exists, copy-major; chunk ch of them. */
        const size_t m = cx->m;
        unsigned ncw = (cx->wtot - w + cx->nwin - 1) / cx->nwin;
        if (ncw > cx->ncopy)
            ncw = cx->ncopy;
        const size_t mv = m * ncw;
        size_t lo = mv * ch / cx->nchunks, hi = mv * (ch + 1) / cx->nchunks;
        /* Counting sort of the chunk's points by bucket: dig[j] = bucket | sign << 31, or
         * UINT32_MAX for digit 0; negated points are stored negated. */
        memset(len, 0, sizeof(uint32_t) * nb);
        for (size_t v = lo; v < hi;) {
            size_t j = v / m, jm = j * m, e = jm + m < hi ? jm + m : hi;
            unsigned we = (unsigned)j * cx->nwin + w;
            for (; v < e; v++) {
                int32_t d = MG_(msm_digit_at)(cx, cx->idx[v - jm], we);
                if (!d) {
                    dig[v - lo] = UINT32_MAX;
                    continue;
                }
                uint32_t b = (uint32_t)(d > 0 ? d : -d) - 1;
                dig[v - lo] = b | (d < 0 ? 0x80000000u : 0);
                len[b]++;
            }
        }
        start[0] = 0;
        size_t np = 0;
        for (size_t b = 0; b < nb; b++) {
            start[b + 1] = start[b] + len[b];
            np += len[b] / 2;
            len[b] = 0;
        }
        for (size_t v = lo; v < hi;) {
            size_t j = v / m, jm = j * m, e = jm + m < hi ? jm + m : hi;
            const MG_(affine) *base = j ? cx->tab + (j - 1) * cx->n : cx->points;
            for (; v < e; v++) {
                uint32_t ev = dig[v - lo];
                /* The stores scatter over the whole sorted copy (several MiB): announce the
                 * destination of a later point (its slot moves on by the points of that
                 * bucket in between, rarely leaving the line) and its source. */
                if (v + MSM_SORT_PF < e) {
                    uint32_t ea = dig[v + MSM_SORT_PF - lo];
                    if (ea != UINT32_MAX) {
                        uint32_t ba = ea & 0x7fffffffu;
                        __builtin_prefetch(&pts[start[ba] + len[ba]], 1);
                        __builtin_prefetch(&base[cx->idx[v + MSM_SORT_PF - jm]]);
                    }
                }
                if (ev == UINT32_MAX)
                    continue;
                uint32_t b = ev & 0x7fffffffu;
                MG_(affine) *dst = &pts[start[b] + len[b]++];
                const MG_(affine) *src = &base[cx->idx[v - jm]];
                dst->x = src->x;
                if (ev >> 31)
                    MF_(neg)(&dst->y, &src->y);
                else
                    dst->y = src->y;
            }
        }
        /* Classification dropped the points at infinity and a table's copies of a finite
         * point are finite (msm_tab_build): the first round has none. */
        int has_inf = 0;
        size_t st = 1;
        for (; np >= cx->min_pairs && np; st *= 2)
            np = MG_(msm_affine_round)(pts, start, len, nb, st, scr, &has_inf);
        MG_(xyzz) tot;
        if (!MG_(msm_grid_sum)(&tot, pts, start, len, nb, st, cap, scr, has_inf, cx->min_pairs,
                               cx->c)) {
            /* sum_b (b+1) B_b = sum over b of (B_{nb-1} + ... + B_b); what is left of a
             * bucket's list is added into the running sum in XYZZ. */
            MG_(xyzz) run;
            MG_(xyzz_set_inf)(&run);
            MG_(xyzz_set_inf)(&tot);
            for (size_t b = nb; b-- > 0;) {
                for (size_t i = 0; i < len[b]; i++)
                    MG_(xyzz_add_affine)(&run, &run, &pts[start[b] + i * st]);
                MG_(xyzz_add)(&tot, &tot, &run);
            }
        }
        MG_(xyzz_to_jac)(&cx->partial[task], &tot);
    }
}

/* Largest window chunk of a plain MSM (points with scalars other than 0 and 1 in one (window,
 * chunk) task): each thread sorts a copy of one chunk, so this bounds the copies and keeps
 * the rounds streaming through them. Larger inputs split every window into at least
 * m / MSM_AFFINE_MAX chunks, each with its own bucket sum. (Above 2^18 points this measured
 * faster than XYZZ buckets, one mixed addition a point, on 2 threads at 2^20: BN254 G1 6-8%,
 * G2 20%; BLS12-381 G1 the same, G2 37%.) */
#define MSM_AFFINE_MAX CUZK__MSM_CHUNK_POINTS(sizeof(MG_(affine)))

/* Window bits minimising the time W(c) (m / K + beta 2^c) / T, c <= 20 (buckets of one
 * thread then stay within a few MiB). K splits the points of each window into chunks (each
 * with its own buckets and bucket sum) when there are fewer windows than 2T, down to 1024
 * points, and into chunks of at most MSM_AFFINE_MAX points. beta weighs the bucket sum
 * against the per-point work: 1.5 for the batch-affine accumulation (fitted on 2^14 .. 2^18
 * BN254 G1 points, 2 threads, after the assembly field add/sub: c = 11, 12, 13, 13 measured
 * best at 2^14, 2^15, 2^16, 2^18; at 2^20 it picks c = 15 with 4 chunks, measured best of
 * 14 .. 17). */
static unsigned MG_(msm_chunks)(unsigned c, size_t m, unsigned T)
{
    unsigned W = MSM_NBITS / c + 1, K = 1;
    while (K * W < 2 * T && (size_t)K * 1024 < m)
        K++;
    const size_t kmin = (m + MSM_AFFINE_MAX - 1) / MSM_AFFINE_MAX;
    return K < kmin ? (unsigned)kmin : K;
}

static unsigned MG_(msm_pick_window)(size_t m, unsigned T, unsigned *nchunks_out)
{
    unsigned best_c = 1, best_k = 1;
    double best = 1e300;
    for (unsigned c = 2; c <= 20; c++) {
        unsigned W = MSM_NBITS / c + 1;
        unsigned K = MG_(msm_chunks)(c, m, T);
        /* Tasks run in rounds of T threads: time ~ ceil(W K / T) tasks of (m/K + 2^c). */
        double rounds = (double)((W * K + T - 1) / T);
        double beta = 1.5;
        double cost = rounds * ((double)m / K + beta * (double)((size_t)1 << c));
        if (cost < best) {
            best = cost;
            best_c = c;
            best_k = K;
        }
    }
    *nchunks_out = best_k;
    return best_c;
}

/* Cost of a table MSM in the model of msm_pick_window: the tasks (nwin local windows x K
 * chunks) run in rounds of T threads, each adding its points into 2^(c-1) buckets (a task of
 * window w holds the copies whose window exists: m W / nwin points on average) and then
 * summing the buckets (beta 2^c). beta = 2.5 rather than msm_pick_window's 1.5: the wide
 * windows tables allow leave few points per bucket, so the bucket sums weigh more (BN254 G1,
 * 2 threads: at 2^15 points and 8 copies 1.5 picked c = 16, 12% slower than c = 13). */
static double MG_(msm_tab_cost)(unsigned c, unsigned nwin, unsigned K, size_t m, unsigned T)
{
    unsigned W = MSM_NBITS / c + 1;
    double rounds = (double)((nwin * K + T - 1) / T);
    return rounds * ((double)m * W / nwin / K + 2.5 * (double)((size_t)1 << c));
}

/* Chunks per local window of a table MSM over m listed points and ncopy copies: the count
 * the model finds cheapest (each chunk pays its own bucket sum, so unlike msm_chunks it does
 * not insist on 2T tasks: a window's sum over its copies already spreads the points), with
 * at most MSM_AFFINE_MAX virtual points per chunk (each thread sorts a copy of one). */
static unsigned MG_(msm_tab_chunks)(unsigned c, unsigned nwin, size_t m, unsigned ncopy,
                                    unsigned T)
{
    size_t mv = m * ncopy;
    size_t kmin = (mv + MSM_AFFINE_MAX - 1) / MSM_AFFINE_MAX;
    unsigned best_k = kmin ? (unsigned)kmin : 1;
    double best = MG_(msm_tab_cost)(c, nwin, best_k, m, T);
    for (unsigned K = best_k + 1; K <= best_k + 4 * T && (size_t)K * 1024 <= mv; K++) {
        double cost = MG_(msm_tab_cost)(c, nwin, K, m, T);
        if (cost < best) {
            best = cost;
            best_k = K;
        }
    }
    return best_k;
}

unsigned MG_(msm_window)(size_t n, unsigned nthreads)
{
    unsigned k;
    return MG_(msm_pick_window)(n, nthreads ? nthreads : cuzk_num_threads(), &k);
}

/* The MSM over points (and, when tab is not NULL, its ncopy - 1 further copies built for
 * window c_tab by msm_tab_build). */
static cuzk_err MG_(msm_run)(MG_(jac) *out, const MG_(affine) *points, const MG_(affine) *tab,
                             unsigned ncopy, unsigned c_tab, const uint8_t *scalars, size_t n,
                             const cuzk_msm_opts *opts)
{
    MG_(set_inf)(out);
    if (n == 0)
        return CUZK_OK;
    if (!points || !scalars || !out || n >= ((size_t)1 << 32))
        return CUZK_INVALID_ARGUMENT;
    unsigned T = opts && opts->nthreads ? opts->nthreads : cuzk_num_threads();
    unsigned flags = opts ? opts->flags : 0;
    if (n < 64 * (size_t)T) /* tiny inputs: thread start-up costs more than the work */
        T = n < 64 ? 1 : (unsigned)(n / 64);
    if (T > 1024)
        T = 1024;

    cuzk_err err = CUZK_NO_MEMORY;
    MG_(msm_ctx) cx;
    memset(&cx, 0, sizeof cx);
    cx.points = points;
    cx.tab = tab;
    cx.ncopy = 1;
    cx.n = n;
    cx.scalars = scalars;
    uint8_t *canon = NULL;
    char *blk = NULL; /* the bucket phase's scratch block, blk_n bytes */
    size_t blk_n = 0;
    if (flags & CUZK_MSM_SCALARS_MONT) {
        canon = malloc(32 * n);
        if (!canon)
            goto done;
        cx.mont_in = scalars;
        cx.canon = canon;
        cuzk_parallel_for((n + 4095) / 4096, T, MG_(msm_mont_task), &cx);
        cx.scalars = canon;
    }

    size_t ncls = (size_t)T * 4;
    if (ncls > n)
        ncls = n;
    cx.cls_chunk = (n + ncls - 1) / ncls;
    ncls = (n + cx.cls_chunk - 1) / cx.cls_chunk;
    cx.idx = malloc(sizeof(uint32_t) * n);
    cx.one_idx = malloc(sizeof(uint32_t) * n);
    cx.cnt = malloc(sizeof(size_t) * ncls);
    cx.ones = malloc(sizeof(MG_(xyzz)) * ncls);
    if (!cx.idx || !cx.one_idx || !cx.cnt || !cx.ones)
        goto done;
    cuzk_parallel_for(ncls, T, MG_(msm_classify_task), &cx);
    if (atomic_load(&cx.bad)) {
        err = CUZK_NON_CANONICAL;
        goto done;
    }
    MG_(xyzz) ones;
    MG_(xyzz_set_inf)(&ones);
    size_t m = 0;
    for (size_t t = 0; t < ncls; t++) {
        MG_(xyzz_add)(&ones, &ones, &cx.ones[t]);
        memmove(cx.idx + m, cx.idx + t * cx.cls_chunk, sizeof(uint32_t) * cx.cnt[t]);
        m += cx.cnt[t];
    }
    cx.m = m;

    MG_(jac) acc;
    MG_(set_inf)(&acc);
    if (m) {
        unsigned Tb = T;
        if (m < 64 * (size_t)Tb)
            Tb = m < 64 ? 1 : (unsigned)(m / 64);
        if (tab) {
            /* Local windows of the tables: the batch-affine phase, chunks bounded. */
            cx.c = c_tab;
            cx.wtot = MSM_NBITS / cx.c + 1;
            cx.ncopy = ncopy;
            cx.nwin = (cx.wtot + ncopy - 1) / ncopy;
            cx.nchunks = MG_(msm_tab_chunks)(cx.c, cx.nwin, m, ncopy, Tb);
            if ((flags & CUZK__MSM_ALL_ROUNDS) && cx.nchunks < 5)
                cx.nchunks = m * ncopy < 5 ? (unsigned)(m * ncopy) : 5; /* tests: chunks
                                                          * that straddle the copies */
        } else {
            cx.c = MG_(msm_pick_window)(m, Tb, &cx.nchunks);
            if (opts && opts->window >= 2 && opts->window <= 24) {
                cx.c = opts->window;
                cx.nchunks = MG_(msm_chunks)(cx.c, m, Tb);
            }
            cx.nwin = cx.wtot = MSM_NBITS / cx.c + 1;
            if ((flags & CUZK__MSM_SMALL_CHUNKS) && cx.nchunks < (m + 15) / 16)
                cx.nchunks = (unsigned)((m + 15) / 16);
        }
        if (cx.nwin * cx.nchunks < Tb)
            Tb = cx.nwin * cx.nchunks;
        size_t mv = m * cx.ncopy;
        size_t nb = (size_t)1 << (cx.c - 1), cap = (mv + cx.nchunks - 1) / cx.nchunks + 1;
        cx.partial = malloc(sizeof(MG_(jac)) * cx.nwin * cx.nchunks);
        if (!cx.partial)
            goto done;
        cx.chunk_cap = cap;
        cx.min_pairs = flags & CUZK__MSM_ALL_ROUNDS ? 1 : MSM_MIN_PAIRS;
        /* One block (msm_scratch_get, reused across MSMs): the sorted points, the
         * inverses, the digits, the bucket starts and lengths, each 64-byte aligned. */
        size_t o_scr, o_dig, o_start, o_len, sz;
        sz = (sizeof(MG_(affine)) * cap * Tb + 63) & ~(size_t)63;
        o_scr = sz;
        sz += (sizeof(MFT) * (cap / 2 + 1) * Tb + 63) & ~(size_t)63;
        o_dig = sz;
        sz += (sizeof(uint32_t) * cap * Tb + 63) & ~(size_t)63;
        o_start = sz;
        sz += (sizeof(uint32_t) * (nb + 1) * Tb + 63) & ~(size_t)63;
        o_len = sz;
        sz += sizeof(uint32_t) * nb * Tb;
        blk = msm_scratch_get(sz, &blk_n);
        if (!blk)
            goto done;
        cx.spts = (MG_(affine) *)blk;
        cx.sscr = (MFT *)(blk + o_scr);
        cx.sdig = (uint32_t *)(blk + o_dig);
        cx.sstart = (uint32_t *)(blk + o_start);
        cx.slen = (uint32_t *)(blk + o_len);
        cuzk_parallel_threads(Tb, MG_(msm_bucket_thread), &cx);
        for (unsigned w = cx.nwin; w-- > 0;) {
            for (unsigned i = 0; i < cx.c; i++)
                MG_(dbl)(&acc, &acc);
            for (unsigned ch = 0; ch < cx.nchunks; ch++)
                MG_(add)(&acc, &acc, &cx.partial[w * cx.nchunks + ch]);
        }
    }
    MG_(jac) oj;
    MG_(xyzz_to_jac)(&oj, &ones);
    MG_(add)(out, &acc, &oj);
    err = CUZK_OK;
done:
    free(canon);
    free(cx.idx);
    free(cx.one_idx);
    free(cx.cnt);
    free(cx.ones);
    msm_scratch_put(blk, blk_n);
    free(cx.partial);
    return err;
}

cuzk_err MG_(msm_ex)(MG_(jac) *out, const MG_(affine) *points, const uint8_t *scalars, size_t n,
                     const cuzk_msm_opts *opts)
{
    return MG_(msm_run)(out, points, NULL, 1, 0, scalars, n, opts);
}

/* ------------------------------------------------------------------ fixed-base tables */

unsigned MG_(msm_tab_copies)(unsigned t, unsigned c)
{
    if (t < 1 || c < 2 || c > MSM_TAB_MAX_C)
        return 0;
    unsigned W = MSM_NBITS / c + 1, wl = (W + t - 1) / t;
    return (W + wl - 1) / wl;
}

unsigned MG_(msm_tab_window)(size_t n, unsigned t, unsigned nthreads)
{
    unsigned T = nthreads ? nthreads : cuzk_num_threads(), best_c = 2;
    if (n < 64 * (size_t)T)
        T = n < 64 ? 1 : (unsigned)(n / 64);
    if (!n)
        n = 1;
    double best = 1e300;
    for (unsigned c = 2; c <= MSM_TAB_MAX_C; c++) {
        unsigned W = MSM_NBITS / c + 1, tc = MG_(msm_tab_copies)(t, c), wl = (W + tc - 1) / tc;
        unsigned K = MG_(msm_tab_chunks)(c, wl, n, tc, T);
        double cost = MG_(msm_tab_cost)(c, wl, K, n, T);
        if (cost < best) {
            best = cost;
            best_c = c;
        }
    }
    return best_c;
}

/* Builds copies 1 .. t - 1 of a chunk of points: Jacobian doublings, one batched inversion
 * per chunk. */
#define MSM_TAB_CHUNK 256
typedef struct {
    const MG_(affine) *points;
    MG_(affine) *tab;
    size_t n;
    unsigned t, shift;
    atomic_int bad; /* a finite point has an infinite copy (not in the prime-order group) */
} MG_(msm_tab_job);

static void MG_(msm_tab_task)(void *arg, size_t ci)
{
    MG_(msm_tab_job) *jb = arg;
    size_t lo = ci * MSM_TAB_CHUNK, hi = lo + MSM_TAB_CHUNK < jb->n ? lo + MSM_TAB_CHUNK : jb->n;
    size_t cnt = hi - lo;
    MG_(jac) *q = malloc(sizeof(MG_(jac)) * cnt);
    MG_(jac) *cp = malloc(sizeof(MG_(jac)) * cnt);
    MFT *scr = malloc(sizeof(MFT) * cnt);
    if (!q || !cp || !scr) {
        atomic_store(&jb->bad, 2);
        goto out;
    }
    for (size_t i = 0; i < cnt; i++)
        MG_(from_affine)(&q[i], &jb->points[lo + i]); /* infinity: Z = 0, stays so */
    for (unsigned j = 1; j < jb->t; j++) {
        for (size_t i = 0; i < cnt; i++) {
            for (unsigned k = 0; k < jb->shift; k++)
                MG_(dbl)(&q[i], &q[i]);
            cp[i] = q[i];
            if (MG_(is_inf)(&q[i]) && !MG_(affine_is_inf)(&jb->points[lo + i]))
                atomic_store(&jb->bad, 1);
        }
        MG_(batch_to_affine)(jb->tab + (size_t)(j - 1) * jb->n + lo, cp, cnt, scr);
    }
out:
    free(q);
    free(cp);
    free(scr);
}

cuzk_err MG_(msm_tab_build)(MG_(affine) *tab, const MG_(affine) *points, size_t n, unsigned t,
                            unsigned c, unsigned nthreads)
{
    if (!t || MG_(msm_tab_copies)(t, c) != t || (n && t > 1 && (!tab || !points)) ||
        n >= ((size_t)1 << 32))
        return CUZK_INVALID_ARGUMENT;
    unsigned W = MSM_NBITS / c + 1;
    MG_(msm_tab_job) jb;
    jb.points = points;
    jb.tab = tab;
    jb.n = n;
    jb.t = t;
    jb.shift = c * ((W + t - 1) / t);
    atomic_init(&jb.bad, 0);
    if (t > 1)
        cuzk_parallel_for((n + MSM_TAB_CHUNK - 1) / MSM_TAB_CHUNK, nthreads, MG_(msm_tab_task),
                          &jb);
    int bad = atomic_load(&jb.bad);
    return bad == 2 ? CUZK_NO_MEMORY : bad ? CUZK_NOT_IN_SUBGROUP : CUZK_OK;
}

cuzk_err MG_(msm_tab)(MG_(jac) *out, const MG_(affine) *points, const MG_(affine) *tab,
                      unsigned t, unsigned c, const uint8_t *scalars, size_t n,
                      const cuzk_msm_opts *opts)
{
    if (!t || MG_(msm_tab_copies)(t, c) != t || (t > 1 && n && !tab)) {
        MG_(set_inf)(out);
        return CUZK_INVALID_ARGUMENT;
    }
    return MG_(msm_run)(out, points, tab ? tab : points, t, c, scalars, n, opts);
}

cuzk_err MG_(msm)(MG_(jac) *out, const MG_(affine) *points, const uint8_t *scalars, size_t n,
                  unsigned nthreads)
{
    cuzk_msm_opts o = {nthreads, 0, 0};
    return MG_(msm_ex)(out, points, scalars, n, &o);
}

#undef MSM_G
#undef MSM_F
#undef MSM_FP2_BASE
#undef MC_
#undef MCT
#undef MSM_FR
#undef MSM_NBITS
#undef MSM_RLIMBS
