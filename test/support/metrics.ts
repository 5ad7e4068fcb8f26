// Reading Prometheus text in tests (issue #13).

/** Every metric name issue #13 lists. */
export const METRIC_NAMES = [
  "baton_tool_calls_total",
  "baton_tool_duration_seconds",
  "baton_transitions_total",
  "baton_commit_statements_total",
  "baton_outbox_rounds_total",
  "baton_bus_request_duration_seconds",
  "baton_partitions_owned",
  "baton_timers_due",
  "baton_timer_lag_seconds",
  "baton_steps_overdue",
  "baton_claim_leases_expired_total",
  "baton_notifications_total",
  // prom-client's process metrics
  "process_cpu_seconds_total",
  "process_resident_memory_bytes",
  "nodejs_eventloop_lag_seconds",
];

/** The sum of every sample of `name` (all label sets) in Prometheus text; 0 when it has none. */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === name) sum += Number(m[3]);
  }
  return sum;
}
