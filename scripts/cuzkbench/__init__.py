"""cuzk-bench: measures a cuzk-daemon over gRPC (throughput, latency, stage times, memory).

Modules: cli (options, outputs), client (the daemon, the gRPC session, memory sampling),
workloads (single, batch, soak, status), stress, compare, checks (results checked
independently of the daemon), stats, report (terminal, Markdown, plots) and svg (the charts).
scripts/cuzk-bench is the launcher; docs/BENCH.md is the guide."""
