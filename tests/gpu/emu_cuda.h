/*
 * CUDA shims for the host emulation tests (msm_emu.cpp, ntt_emu.cpp): the device kernels of
 * src/gpu compiled as plain C++ with CUZK_GPU_HOST_EMU. Include first, before the gpu headers.
 *
 * A launch runs its blocks one after another. launch_serial runs a block's threads one after
 * another too (kernels without __syncthreads); launch_block runs them as coroutines on this
 * host thread (ucontext): each runs until it reaches __syncthreads or returns, then the next
 * one runs, so a barrier is one round over the block's threads. __shared__ arrays are
 * function-local statics (one block at a time), dynamic shared memory one host array
 * (emu_dyn_shared). The emulated carry flag (field.cuh) is never live across a barrier, so the
 * coroutines may share it. atomicMin is a plain read-modify-write (one host thread).
 */
#ifndef CUZK_TESTS_GPU_EMU_CUDA_H
#define CUZK_TESTS_GPU_EMU_CUDA_H

#define CUZK_GPU_HOST_EMU 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <functional>
#include <vector>

struct uint2 {
    uint32_t x, y;
};
struct uint4 {
    uint32_t x, y, z, w;
};
static inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w)
{
    return uint4{x, y, z, w};
}
struct emu_dim3 {
    unsigned x, y, z;
};
static emu_dim3 blockIdx, threadIdx, blockDim;

static void emu_sync();
#define __global__
#define __launch_bounds__(...)
#define __shared__ static
#define __ldg(p) (*(p))
#define __syncthreads() emu_sync()
static inline uint32_t __brev(uint32_t x)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
static inline int __ffsll(long long v) { return __builtin_ffsll(v); }
static inline int __clzll(long long v) { return __builtin_clzll((unsigned long long)v); }
static inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = *p;
    if (v < old)
        *p = v;
    return old;
}

/* The blocks' dynamic shared memory (k_ntt_pass's extern __shared__ array on the device). */
static uint32_t emu_dyn_shared_mem[8 * 2048];
static inline uint32_t *emu_dyn_shared() { return emu_dyn_shared_mem; }

struct emu_block {
    ucontext_t sched;
    std::vector<ucontext_t> ctx;
    std::vector<std::vector<char>> stacks;
    std::vector<char> done;
    unsigned cur = 0;
    bool in_block = false;
    std::function<void()> body;
};
static emu_block emu_blk;
static void emu_sync()
{
    if (emu_blk.in_block) /* launch_serial's kernels have no barrier to wait at */
        swapcontext(&emu_blk.ctx[emu_blk.cur], &emu_blk.sched);
}
static void emu_entry()
{
    emu_blk.body();
    emu_blk.done[emu_blk.cur] = 1; /* then back to uc_link, the scheduler */
}

/* Warp shuffles and __syncwarp for kernels whose lanes work in pairs (ba_halves.cuh: lane t
 * with lane t ^ 1), run by launch_block: a shuffle stores this lane's word and yields, so that
 * the partner stores its own in the same round, then reads the partner's. Partners make the
 * same shuffles in the same order (they run the same code on the same slice), so a round holds
 * one shuffle of each; the stores alternate between two slots so that a partner that resumes
 * first and goes on to its next shuffle does not overwrite the word not yet read. */
static uint32_t emu_shfl_val[2][1024];
static unsigned emu_shfl_cnt[1024];
static void emu_need_block(const char *what)
{
    if (!emu_blk.in_block) {
        fprintf(stderr, "emu_cuda.h: %s outside launch_block (its lanes must run as coroutines)\n",
                what);
        abort();
    }
}
static inline uint32_t __shfl_xor_sync(unsigned, uint32_t v, int lane_mask)
{
    emu_need_block("__shfl_xor_sync");
    const unsigned t = threadIdx.x, u = t ^ (unsigned)lane_mask, n = emu_shfl_cnt[t]++;
    emu_shfl_val[n & 1][t] = v;
    emu_sync();
    /* the partner stored its word of this shuffle (and may be at its next one already): a
     * partner that returned or skipped a shuffle would be undefined on the device */
    if (emu_shfl_cnt[u] != n + 1 && emu_shfl_cnt[u] != n + 2) {
        fprintf(stderr, "emu_cuda.h: lane %u's shuffle %u has no partner (lane %u at %u)\n", t,
                n, u, emu_shfl_cnt[u]);
        abort();
    }
    return emu_shfl_val[n & 1][u];
}
static inline void __syncwarp(unsigned)
{
    emu_need_block("__syncwarp");
    emu_sync();
}

/* Warp votes for kernels run by launch_block (ba_halves.cuh's add_slice_h): __activemask
 * is the warp's lanes that have not returned after a
 * round (the kernels' lanes that return early do so in their first turn, and the others all
 * reach the votes; the device's answer, the lanes running together, is that or a part);
 * __any_sync stores this lane's predicate and yields until every lane in the mask has made
 * this vote, as the device makes the lanes wait for each other. Each lane's count of votes
 * names the vote (two slots: a lane can be at most one vote ahead of one still reading), and a
 * lane in the mask that returned instead of voting would hang the device: it aborts here. */
static int emu_vote_val[2][1024];
static unsigned emu_vote_cnt[1024];
static inline unsigned __activemask()
{
    emu_need_block("__activemask");
    emu_sync(); /* every lane has had a turn: those that return before their votes have */
    const unsigned base = threadIdx.x & ~31u;
    unsigned m = 0;
    for (unsigned l = 0; l < 32 && base + l < blockDim.x; l++)
        if (!emu_blk.done[base + l])
            m |= 1u << l;
    return m;
}
static inline int __any_sync(unsigned mask, int pred)
{
    emu_need_block("__any_sync");
    const unsigned t = threadIdx.x, base = t & ~31u, n = emu_vote_cnt[t]++;
    emu_vote_val[n & 1][t] = pred != 0;
    for (;;) {
        bool all = true;
        for (unsigned l = 0; l < 32; l++) {
            if (!((mask >> l) & 1))
                continue;
            if (emu_vote_cnt[base + l] > n)
                continue; /* voted (and may have returned since) */
            if (emu_blk.done[base + l]) {
                fprintf(stderr, "emu_cuda.h: lane %u of vote %u's mask returned without it\n",
                        base + l, n);
                abort();
            }
            all = false;
        }
        if (all)
            break;
        emu_sync();
    }
    int r = 0;
    for (unsigned l = 0; l < 32; l++)
        if ((mask >> l) & 1)
            r |= emu_vote_val[n & 1][base + l];
    return r;
}

/* A kernel without __syncthreads: every thread of every block in turn. */
template <class K> static void launch_serial(size_t blocks, unsigned threads, K k)
{
    blockDim = {threads, 1, 1};
    for (size_t b = 0; b < blocks; b++) {
        blockIdx = {(unsigned)b, 0, 0};
        for (unsigned t = 0; t < threads; t++) {
            threadIdx = {t, 0, 0};
            k();
        }
    }
}

/* A kernel with __syncthreads: each block's threads as coroutines. */
template <class K> static void launch_block(size_t blocks, unsigned threads, K k)
{
    blockDim = {threads, 1, 1};
    emu_block &B = emu_blk;
    B.ctx.resize(threads);
    B.stacks.resize(threads);
    for (auto &st : B.stacks)
        st.resize(1 << 16);
    B.done.assign(threads, 0);
    B.body = k;
    B.in_block = true;
    for (size_t b = 0; b < blocks; b++) {
        blockIdx = {(unsigned)b, 0, 0};
        for (unsigned t = 0; t < threads; t++) {
            getcontext(&B.ctx[t]);
            B.ctx[t].uc_stack.ss_sp = B.stacks[t].data();
            B.ctx[t].uc_stack.ss_size = B.stacks[t].size();
            B.ctx[t].uc_link = &B.sched;
            makecontext(&B.ctx[t], emu_entry, 0);
            B.done[t] = 0;
            emu_vote_cnt[t] = 0;
        }
        for (;;) { /* rounds: every live thread runs to its next barrier or its end */
            unsigned live = 0;
            for (unsigned t = 0; t < threads; t++) {
                if (B.done[t])
                    continue;
                B.cur = t;
                threadIdx = {t, 0, 0};
                swapcontext(&B.sched, &B.ctx[t]);
                live++;
            }
            if (!live)
                break;
        }
    }
    B.in_block = false;
}

/* Streams, events, allocations and copies for host code over the CUDA runtime
 * (src/gpu/msm/stream.cuh, run by stream_emu.cpp). Every stream executes its work at once unless it
 * was created while emu_defer_streams was set: such a stream queues its copies and memsets,
 * and runs them only when an event recorded after them is waited for (cudaStreamWaitEvent,
 * cudaEventSynchronize) or the stream is synchronised. So work that reads a buffer without
 * waiting for its copy's event reads what was there before, as it may on a device. */
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
enum { cudaStreamNonBlocking = 1, cudaEventDisableTiming = 2 };
struct emu_stream {
    bool defer;
    std::vector<std::function<void()>> q; /* deferred work not yet run */
    size_t queued = 0, ran = 0;           /* work items ever queued, and run */
};
struct emu_event {
    emu_stream *s = nullptr;
    size_t at = 0; /* done once s has run this many items */
};
typedef emu_stream *cudaStream_t;
typedef emu_event *cudaEvent_t;
static bool emu_defer_streams;
static long emu_copies; /* copies and memsets run (stream_emu.cpp counts them) */
static inline const char *cudaGetErrorString(cudaError_t e) { return e ? "emulated error" : "ok"; }
static inline cudaError_t cudaGetLastError() { return cudaSuccess; }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned)
{
    *s = new emu_stream;
    (*s)->defer = emu_defer_streams;
    return cudaSuccess;
}
static inline void emu_run_to(emu_stream *s, size_t at)
{
    while (s->ran < at) {
        s->q[s->ran - (s->queued - s->q.size())]();
        s->ran++;
    }
    if (s->ran == s->queued)
        s->q.clear();
}
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (s)
        emu_run_to(s, s->queued);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    cudaStreamSynchronize(s);
    delete s;
    return cudaSuccess;
}
static inline void emu_enqueue(cudaStream_t s, std::function<void()> f)
{
    if (!s || !s->defer) {
        f();
        if (s)
            s->queued++, s->ran++;
        return;
    }
    s->q.push_back(f);
    s->queued++;
}
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned)
{
    *e = new emu_event;
    return cudaSuccess;
}
static inline cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    delete e;
    return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    e->s = s;
    e->at = s ? s->queued : 0;
    return cudaSuccess;
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (e->s)
        emu_run_to(e->s, e->at);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t e, unsigned)
{
    return cudaEventSynchronize(e); /* the waiting stream runs its later work at once */
}
static inline cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind,
                                          cudaStream_t st)
{
    emu_enqueue(st, [=] {
        memcpy(d, s, n);
        emu_copies++;
    });
    return cudaSuccess;
}
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st)
{
    emu_enqueue(st, [=] {
        memset(d, v, n);
        emu_copies++;
    });
    return cudaSuccess;
}

#endif
