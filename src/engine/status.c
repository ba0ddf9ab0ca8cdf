/* The engine's status, its circuits' list and the Prometheus metrics text. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"

#include <stdio.h>

#include "cuzk/json.h"
#include "util/clock.h"

/* The process's resident memory now and at its peak (VmRSS, VmHWM; 0 where unknown). */
static void process_memory(uint64_t *rss, uint64_t *peak)
{
    *rss = *peak = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    unsigned long long kb;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
            *rss = (uint64_t)kb << 10;
        else if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
            *peak = (uint64_t)kb << 10;
    }
    fclose(f);
}

void cuzk_engine_get_status(cuzk_engine *e, cuzk_engine_status *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&e->mu);
    s->uptime_s = (cuzk__now_ms() - e->start_ms) / 1e3;
    s->workers = e->cfg.partition_workers;
    s->busy_workers = e->busy_partition_workers;
    for (job *j = e->jobs_head; j; j = j->next) {
        if (!job_live(j))
            continue;
        if (j->admitted)
            s->jobs_in_flight++;
        else
            s->jobs_queued++;
        if (!j->cancel_requested)
            s->partitions_pending += (unsigned)(j->n_parts - j->next_part);
    }
    s->jobs_submitted = e->submitted;
    s->jobs_completed = e->completed;
    s->jobs_failed = e->failed;
    s->jobs_cancelled = e->cancelled;
    s->partitions_proved = e->partitions_proved;
    s->partitions_failed = e->partitions_failed;
    s->keys_loaded = e->keys_loaded;
    s->keys_evicted = e->keys_evicted;
    s->prove_ms_total = e->prove_ms_total;
    for (size_t i = 0; i < e->n_circuits; i++) {
        const circuit *c = &e->circuits[i];
        cuzk_key_tier t = cuzk__key_tier(c);
        s->keys_bytes += c->host_bytes;
        s->keys_pinned_bytes += c->pinned_bytes;
        s->keys_gpu_bytes += (uint64_t)__builtin_popcount(c->gpu_staged_mask) * c->gpu_copy_bytes;
        if (t == CUZK_TIER_MAPPED)
            s->keys_mapped_bytes += c->cache_bytes;
        s->keys_in_tier[t]++;
    }
    s->pinned_budget = e->pinned_budget;
    s->pinned_peak = e->pinned_peak;
    s->pinned_unpins = e->key_unpins;
    s->keys_pinned = e->keys_pinned;
    s->key_budget = e->cfg.key_budget;
    s->gpu_budget_cpu = e->gpu_budget_cpu_stages;
    s->n_devices = e->n_devices;
    for (unsigned d = 0; d < e->n_devices; d++) {
        const gpu_device *g = &e->devices[d];
        s->devices[d].id = g->id;
        snprintf(s->devices[d].name, sizeof s->devices[d].name, "%s", g->name);
        s->devices[d].workers = g->workers;
        s->devices[d].busy = g->busy_workers;
        s->devices[d].partitions = g->partitions;
        s->devices[d].g2_partitions = g->g2_partitions;
        s->devices[d].g2_only = (int)d == e->g2_device;
        s->devices[d].faults = g->faults;
        s->devices[d].disabled = g->disabled;
        s->devices[d].key_budget = g->key_budget;
        s->devices[d].key_bytes = g->key_bytes;
        s->devices[d].key_peak = g->key_peak;
        s->devices[d].key_stages = g->key_stages;
        s->devices[d].key_unstages = g->key_unstages;
        s->devices[d].scratch_estimate = (uint64_t)g->workers * g->worker_scratch;
        s->gpu_unstages += g->key_unstages;
        s->gpu_workers += g->workers;
        s->gpu_busy += g->busy_workers;
    }
    s->gpu_faults = e->gpu_faults;
    s->gpu_retries = e->gpu_retries;
    s->stream_batches = e->stream_batches;
    s->cpu_fallbacks = e->cpu_fallbacks;
    s->keys_from_cache = e->keys_from_cache;
    s->g2_on_gpu = e->g2_gpu_partitions;
    s->working_allocated = e->working_allocated;
    s->fallback_reserve = e->fallback_reserve;
    s->witness_pinned_bytes = e->witness_pinned_bytes;
    int real = real_gpus(e);
    pthread_mutex_unlock(&e->mu);
    for (unsigned d = 0; real && d < s->n_devices; d++) {
        uint64_t fr = 0, tot = 0;
        cuzk_errbuf meb = {{0}};
        if (!s->devices[d].disabled &&
            cuzk_gpu_mem_info(s->devices[d].id, &fr, &tot, &meb) == CUZK_OK && tot >= fr) {
            s->devices[d].memory_total = tot;
            s->devices[d].memory_used = tot - fr;
        }
    }
    process_memory(&s->host_rss, &s->host_rss_peak);
    cuzk_budget_get_snapshot(e->working_mem, &s->budget);
    cuzk_budget_get_snapshot(e->witness_mem, &s->witness_budget);
}

size_t cuzk_engine_circuits(cuzk_engine *e, cuzk_circuit_info *out, size_t max)
{
    pthread_mutex_lock(&e->mu);
    for (size_t i = 0; i < e->n_circuits && i < max; i++) {
        const circuit *c = &e->circuits[i];
        cuzk_circuit_info *o = &out[i];
        memset(o, 0, sizeof *o);
        snprintf(o->id, sizeof o->id, "%s", c->id);
        snprintf(o->zkey, sizeof o->zkey, "%s", c->zkey);
        o->curve = (int)c->curve;
        o->n_vars = c->n_vars;
        o->n_public = c->n_public;
        o->domain_size = c->domain_size;
        o->resident = c->pk != NULL;
        for (unsigned d = 0; d < e->n_devices; d++)
            if (c->gpu_staged_mask & (1u << d) && e->devices[d].id >= 0 && e->devices[d].id < 32)
                o->gpu_mask |= 1u << e->devices[d].id;
        o->tier = cuzk__key_tier(c);
        o->gpu_bytes = (uint64_t)__builtin_popcount(c->gpu_staged_mask) * c->gpu_copy_bytes;
        o->gpu_streamed = c->gpu_staged_mask ? c->gpu_streamed : 0;
        o->pinned_bytes = c->pinned_bytes;
        o->mapped_bytes = c->mapped ? c->cache_bytes : 0;
        o->bytes = c->host_bytes;
        o->holders = c->holders;
        o->priority = c->priority;
        o->partition_bytes = c->partition_bytes;
        o->gpu_partition_bytes = c->gpu_partition_bytes;
        o->generated = c->generated;
        o->note = c->generated ? CUZK_PK_GENERATED_NOTE : "";
        if (c->generated)
            cuzk__generate_desc(c, o->generate, sizeof o->generate);
    }
    size_t n = e->n_circuits;
    pthread_mutex_unlock(&e->mu);
    return n;
}

char *cuzk_engine_metrics(cuzk_engine *e)
{
    cuzk_engine_status s;
    cuzk_engine_get_status(e, &s);
    cuzk_strbuf sb;
    cuzk_sb_init(&sb);
#define GAUGE(name, help, fmt, v)                                                                  \
    cuzk_sb_printf(&sb, "# HELP " name " " help "\n# TYPE " name " gauge\n" name " " fmt "\n", v)
#define COUNTER(name, help, v)                                                                     \
    cuzk_sb_printf(&sb, "# HELP " name " " help "\n# TYPE " name " counter\n" name " %" PRIu64     \
                   "\n", (uint64_t)(v))
    GAUGE("cuzk_uptime_seconds", "Seconds since the engine started.", "%.3f", s.uptime_s);
    GAUGE("cuzk_partition_workers", "Partition workers (pw).", "%u", s.workers);
    GAUGE("cuzk_partition_workers_busy", "Partition workers proving now.", "%u", s.busy_workers);
    GAUGE("cuzk_jobs_queued", "Jobs waiting for admission.", "%u", s.jobs_queued);
    GAUGE("cuzk_jobs_in_flight", "Admitted jobs not yet finished.", "%u", s.jobs_in_flight);
    GAUGE("cuzk_partitions_pending", "Partitions not yet started.", "%u", s.partitions_pending);
    COUNTER("cuzk_jobs_submitted_total", "Jobs accepted.", s.jobs_submitted);
    cuzk_sb_printf(&sb, "# HELP cuzk_jobs_finished_total Jobs ended, by final state.\n"
                        "# TYPE cuzk_jobs_finished_total counter\n"
                        "cuzk_jobs_finished_total{state=\"completed\"} %" PRIu64 "\n"
                        "cuzk_jobs_finished_total{state=\"failed\"} %" PRIu64 "\n"
                        "cuzk_jobs_finished_total{state=\"cancelled\"} %" PRIu64 "\n",
                   s.jobs_completed, s.jobs_failed, s.jobs_cancelled);
    COUNTER("cuzk_partitions_proved_total", "Partitions proved (and self-verified).",
            s.partitions_proved);
    COUNTER("cuzk_partitions_failed_total", "Partitions that failed.", s.partitions_failed);
    GAUGE("cuzk_prove_seconds_total", "Seconds spent proving partitions.", "%.3f",
          s.prove_ms_total / 1e3);
    COUNTER("cuzk_keys_loaded_total", "Proving keys loaded.", s.keys_loaded);
    COUNTER("cuzk_keys_evicted_total", "Proving keys evicted.", s.keys_evicted);
    GAUGE("cuzk_keys_resident_bytes", "Bytes of resident proving keys.", "%" PRIu64, s.keys_bytes);
    GAUGE("cuzk_budget_limit_bytes", "Working memory budget.", "%" PRIu64, s.budget.limit);
    GAUGE("cuzk_budget_in_use_bytes", "Working memory reserved now.", "%" PRIu64, s.budget.in_use);
    GAUGE("cuzk_budget_peak_bytes", "Peak working memory reserved.", "%" PRIu64, s.budget.peak);
    GAUGE("cuzk_budget_waiting", "Reservations waiting for memory now.", "%" PRIu64,
          s.budget.waiting);
    COUNTER("cuzk_budget_waits_total", "Reservations that had to wait.", s.budget.waits);
    GAUGE("cuzk_witness_budget_limit_bytes", "Budget for the witnesses of accepted jobs.",
          "%" PRIu64, s.witness_budget.limit);
    GAUGE("cuzk_witness_bytes", "Witness bytes held for accepted jobs.", "%" PRIu64,
          s.witness_budget.in_use);
    GAUGE("cuzk_working_allocated_bytes", "Working memory the running partitions hold now.",
          "%" PRIu64, s.working_allocated);
    GAUGE("cuzk_witness_pinned_bytes", "Partitions' witness copies page-locked for DMA.",
          "%" PRIu64, s.witness_pinned_bytes);
    GAUGE("cuzk_process_resident_bytes", "The process's resident memory (VmRSS).", "%" PRIu64,
          s.host_rss);
    GAUGE("cuzk_process_resident_peak_bytes", "The process's peak resident memory (VmHWM).",
          "%" PRIu64, s.host_rss_peak);
    GAUGE("cuzk_gpu_workers", "GPU workers (gw x devices).", "%u", s.gpu_workers);
    GAUGE("cuzk_gpu_workers_busy", "GPU workers running a partition's GPU stage now.", "%u",
          s.gpu_busy);
    COUNTER("cuzk_gpu_faults_total", "GPU stages that faulted.", s.gpu_faults);
    COUNTER("cuzk_gpu_retries_total", "GPU stages retried on another device.", s.gpu_retries);
    COUNTER("cuzk_stream_batches_total",
            "Batches of several partitions' witness MSMs over streamed point sets.",
            s.stream_batches);
    COUNTER("cuzk_gpu_cpu_fallbacks_total", "GPU stages redone on the CPU.", s.cpu_fallbacks);
    COUNTER("cuzk_g2_on_gpu_total", "Partitions whose B in G2 ran on a GPU worker.",
            s.g2_on_gpu);
    COUNTER("cuzk_keys_from_cache_total", "Proving keys loaded from their cache file.",
            s.keys_from_cache);
    GAUGE("cuzk_keys_gpu_bytes", "Bytes of proving keys staged on GPUs (all devices).",
          "%" PRIu64, s.keys_gpu_bytes);
    GAUGE("cuzk_keys_pinned_bytes", "Bytes of proving keys page-locked in host memory.",
          "%" PRIu64, s.keys_pinned_bytes);
    GAUGE("cuzk_keys_mapped_bytes", "Bytes of the cache files of evicted keys (mapped tier).",
          "%" PRIu64, s.keys_mapped_bytes);
    GAUGE("cuzk_pinned_budget_bytes", "Budget for page-locked proving keys.", "%" PRIu64,
          s.pinned_budget);
    COUNTER("cuzk_gpu_key_unstages_total", "Staged keys freed to make room on a GPU.",
            s.gpu_unstages);
    COUNTER("cuzk_pinned_key_unpins_total", "Pinned keys unpinned to make room.",
            s.pinned_unpins);
    COUNTER("cuzk_keys_pinned_total", "Proving keys page-locked.", s.keys_pinned);
    COUNTER("cuzk_gpu_budget_cpu_stages_total",
            "GPU stages run on the CPU: the key is larger than every device's GPU budget.",
            s.gpu_budget_cpu);
    cuzk_sb_printf(&sb, "# HELP cuzk_keys_in_tier Proving keys per residency tier.\n"
                        "# TYPE cuzk_keys_in_tier gauge\n");
    for (int t = 0; t < 5; t++)
        cuzk_sb_printf(&sb, "cuzk_keys_in_tier{tier=\"%s\"} %u\n",
                       cuzk_key_tier_name((cuzk_key_tier)t), s.keys_in_tier[t]);
    if (s.n_devices) {
        cuzk_sb_printf(&sb, "# HELP cuzk_gpu_key_bytes Bytes of keys staged, by device.\n"
                            "# TYPE cuzk_gpu_key_bytes gauge\n");
        for (unsigned d = 0; d < s.n_devices; d++)
            cuzk_sb_printf(&sb, "cuzk_gpu_key_bytes{device=\"%d\"} %" PRIu64 "\n",
                           s.devices[d].id, s.devices[d].key_bytes);
        cuzk_sb_printf(&sb, "# HELP cuzk_gpu_key_budget_bytes GPU key budget, by device.\n"
                            "# TYPE cuzk_gpu_key_budget_bytes gauge\n");
        for (unsigned d = 0; d < s.n_devices; d++)
            cuzk_sb_printf(&sb, "cuzk_gpu_key_budget_bytes{device=\"%d\"} %" PRIu64 "\n",
                           s.devices[d].id, s.devices[d].key_budget);
    }
    if (s.n_devices && s.devices[0].memory_total) {
        cuzk_sb_printf(&sb, "# HELP cuzk_gpu_memory_used_bytes Device memory in use, by "
                            "device.\n# TYPE cuzk_gpu_memory_used_bytes gauge\n");
        for (unsigned d = 0; d < s.n_devices; d++)
            cuzk_sb_printf(&sb, "cuzk_gpu_memory_used_bytes{device=\"%d\"} %" PRIu64 "\n",
                           s.devices[d].id, s.devices[d].memory_used);
    }
    if (s.n_devices) {
        cuzk_sb_printf(&sb, "# HELP cuzk_gpu_partitions_total Partition GPU stages done, by "
                            "device.\n# TYPE cuzk_gpu_partitions_total counter\n");
        for (unsigned d = 0; d < s.n_devices; d++)
            cuzk_sb_printf(&sb, "cuzk_gpu_partitions_total{device=\"%d\"} %" PRIu64 "\n",
                           s.devices[d].id, s.devices[d].partitions);
        cuzk_sb_printf(&sb, "# HELP cuzk_gpu_g2_partitions_total Partitions whose B in G2 ran "
                            "on the device, by device.\n"
                            "# TYPE cuzk_gpu_g2_partitions_total counter\n");
        for (unsigned d = 0; d < s.n_devices; d++)
            cuzk_sb_printf(&sb, "cuzk_gpu_g2_partitions_total{device=\"%d\"} %" PRIu64 "\n",
                           s.devices[d].id, s.devices[d].g2_partitions);
        cuzk_sb_printf(&sb, "# HELP cuzk_gpu_disabled Whether the device is disabled (after 3 "
                            "faults in a row), by device.\n# TYPE cuzk_gpu_disabled gauge\n");
        for (unsigned d = 0; d < s.n_devices; d++)
            cuzk_sb_printf(&sb, "cuzk_gpu_disabled{device=\"%d\"} %d\n", s.devices[d].id,
                           s.devices[d].disabled);
    }
    cuzk_sb_printf(&sb, "# HELP cuzk_memory_in_use_bytes Working memory by owner.\n"
                        "# TYPE cuzk_memory_in_use_bytes gauge\n");
    for (int o = 0; o < CUZK_OWNER__COUNT; o++)
        cuzk_sb_printf(&sb, "cuzk_memory_in_use_bytes{owner=\"%s\"} %" PRIu64 "\n",
                       cuzk_owner_name((cuzk_owner)o), s.budget.owner[o].in_use);
    cuzk_sb_printf(&sb, "# HELP cuzk_key_resident Whether a circuit's proving key is resident.\n"
                        "# TYPE cuzk_key_resident gauge\n");
    pthread_mutex_lock(&e->mu);
    for (size_t i = 0; i < e->n_circuits; i++)
        cuzk_sb_printf(&sb, "cuzk_key_resident{circuit=\"%s\"} %d\n", e->circuits[i].id,
                       e->circuits[i].pk != NULL);
    cuzk_sb_printf(&sb, "# HELP cuzk_key_tier A circuit's key residency tier (1 for its tier).\n"
                        "# TYPE cuzk_key_tier gauge\n");
    for (size_t i = 0; i < e->n_circuits; i++)
        cuzk_sb_printf(&sb, "cuzk_key_tier{circuit=\"%s\",tier=\"%s\"} 1\n", e->circuits[i].id,
                       cuzk_key_tier_name(cuzk__key_tier(&e->circuits[i])));
    pthread_mutex_unlock(&e->mu);
#undef GAUGE
#undef COUNTER
    if (sb.oom) {
        cuzk_sb_free(&sb);
        return NULL;
    }
    return sb.buf;
}
