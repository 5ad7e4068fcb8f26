import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DistributedDeployment, POSTGRES_URL, REPO, startDistributed } from "../support/deploy.ts";
import { METRIC_NAMES, metricSum } from "../support/metrics.ts";
import { OtlpReceiver } from "../support/otlp.ts";
import { exited, until } from "../support/processes.ts";
import { TcpProxy } from "../support/tcp-proxy.ts";

/**
 * Issue #13, the operations half, on the services as separate `baton serve` processes: each
 * answers `/healthz`, `/readyz` and `/metrics` on its operations port (`BATON_OPS_PORT`); `/readyz`
 * follows PostgreSQL (reached through this test's own TCP proxy, so cutting it touches no other
 * suite); the metrics a walk moves are non-zero; one trace spans the gateway, the engine and a
 * PostgreSQL statement of a `submit` (a real OTLP/HTTP receiver, JSON encoding); SIGTERM makes a
 * service unready before it drains.
 */

const SERVICES = ["registry", "evidence", "engine", "scheduler", "gateway", "notifier"] as const;
/** The services that use PostgreSQL (all but the gateway). */
const WITH_DATABASE = SERVICES.filter((s) => s !== "gateway");

describe("operations: health, readiness, metrics and traces of every service (issue #13)", () => {
  let baton: DistributedDeployment;
  let pgProxy: TcpProxy;
  let otlp: OtlpReceiver;
  /** One process of each service, as started. */
  const proc = new Map<string, ChildProcess>();

  const get = async (url: string) => {
    const response = await fetch(url);
    return { status: response.status, text: await response.text() };
  };
  const ops = (service: string, path: string) =>
    get(`${baton.opsUrl(proc.get(service) as ChildProcess)}${path}`).catch((error: unknown) => {
      throw new Error(`${service} ${path}: ${String(error)}\n${baton.logs()}`);
    });

  beforeAll(async () => {
    otlp = await OtlpReceiver.start();
    const pgUrl = new URL(POSTGRES_URL);
    pgProxy = await TcpProxy.start({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    baton = await startDistributed({
      postgresVia: { host: "127.0.0.1", port: pgProxy.port },
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
      },
    });
    baton.serve("notifier");
    for (const s of SERVICES) proc.set(s, baton.running(s)[0] as ChildProcess);
    await baton.publish(join(REPO, "bench/processes/bench-step"));
  }, 240_000);

  afterAll(async () => {
    await baton?.stop();
    await pgProxy?.close();
    await otlp?.close();
  });

  it("every service answers /healthz and /readyz on its operations port; the gateway keeps /healthz on its public port", async () => {
    for (const service of SERVICES) {
      // The notifier was started last: its operations server may not listen yet.
      await until(
        async () => (await ops(service, "/readyz").catch(() => ({ status: 0 }))).status === 200,
        `${service} ready`,
        60_000,
      );
      expect((await ops(service, "/healthz")).status).toBe(200);
      const ready = JSON.parse((await ops(service, "/readyz")).text);
      expect(ready.ready).toBe(true);
      expect(Object.keys(ready.checks)).toEqual(
        expect.arrayContaining(service === "gateway" ? ["nats", "s3"] : ["postgres", "nats"]),
      );
      expect(Object.keys(ready.checks)).not.toContain("redis");
    }
    expect(JSON.parse((await ops("engine", "/readyz")).text).checks.partitions).toBe("ok");
    expect(JSON.parse((await ops("gateway", "/readyz")).text).checks.s3).toBe("ok");
    expect(JSON.parse((await ops("evidence", "/readyz")).text).checks.s3).toBe("ok");
    const publicBase = baton.url.replace(/\/mcp$/, "");
    expect((await get(`${publicBase}/healthz`)).status).toBe(200);
    // Metrics are never on the port agents reach.
    expect((await get(`${publicBase}/metrics`)).status).toBe(404);
  });

  it("after a walk, /metrics shows every metric, with tool calls, tool duration, transitions and bus requests non-zero; one trace spans gateway, engine and PostgreSQL for a submit", async () => {
    const agent = await baton.session({ kind: "agent", id: "a_ops" });
    const start = await agent.ok("start_run", {
      process: "bench-step",
      inputs: { n: 1 },
      requestId: randomUUID(),
    });
    const runId = start.run.id as string;
    const claim = await agent.ok("claim", { runId, stepId: "work", requestId: randomUUID() });
    const submitted = await agent.ok("submit", {
      token: claim.token,
      output: { n: 1 },
      summary: "Did it.",
      requestId: randomUUID(),
    });
    expect(submitted.run.state).toBe("ended");
    await agent.close();

    const text: Record<string, string> = {};
    for (const service of SERVICES) {
      const m = await ops(service, "/metrics");
      expect(m.status).toBe(200);
      text[service] = m.text;
      for (const name of METRIC_NAMES) expect(m.text, `${service} /metrics`).toContain(`# TYPE ${name} `);
      // Labels never hold run ids.
      expect(m.text).not.toContain(runId);
    }
    expect(metricSum(text.gateway as string, "baton_tool_calls_total")).toBeGreaterThanOrEqual(3);
    expect(text.gateway).toMatch(/baton_tool_calls_total\{tool="submit",outcome="ok"\} 1/);
    expect(metricSum(text.gateway as string, "baton_tool_duration_seconds_count")).toBeGreaterThanOrEqual(3);
    expect(metricSum(text.gateway as string, "baton_tool_duration_seconds_sum")).toBeGreaterThan(0);
    expect(metricSum(text.engine as string, "baton_transitions_total")).toBeGreaterThanOrEqual(3);
    expect(metricSum(text.engine as string, "baton_partitions_owned")).toBe(16);
    expect(text.gateway).toMatch(/baton_bus_request_duration_seconds_count\{subject="engine\.write"\} [1-9]/);
    expect(metricSum(text.gateway as string, "baton_bus_request_duration_seconds_sum")).toBeGreaterThan(0);

    // The submit's trace: the gateway's HTTP and tool spans, the bus hop, the engine's handling and
    // its PostgreSQL statements, under one trace id.
    let spans: ReturnType<OtlpReceiver["trace"]> = [];
    await until(
      () => {
        const tool = otlp.spans.find((s) => s.name === "tool submit");
        spans = tool ? otlp.trace(tool.traceId) : [];
        return spans.some((s) => s.service === "baton-engine" && s.name.startsWith("pg.query"));
      },
      `a trace with the submit's PostgreSQL statements (spans so far: ${otlp.spans.length})`,
      30_000,
    );
    const services = new Set(spans.map((s) => s.service));
    expect([...services]).toEqual(expect.arrayContaining(["baton-gateway", "baton-engine"]));
    const names = spans.map((s) => `${s.service} ${s.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        "baton-gateway tool submit",
        "baton-gateway call engine.write",
        "baton-engine serve engine.write",
      ]),
    );
    // No token in any span attribute.
    expect(JSON.stringify(spans)).not.toContain(claim.token);
    // The run's end reached the notifier in the same trace (outbox → JetStream → notifier), and the
    // gateway's HTTP server span is the trace's only root: every other span, the notifier's too, has
    // its parent in the trace. Each service exports its spans in batches as they end, so a child
    // (a notifier's pg.query) can arrive before its parent: wait for the whole trace, then judge it.
    const traceId = spans[0]?.traceId as string;
    let roots: typeof spans = [];
    await until(
      () => {
        spans = otlp.trace(traceId);
        const ids = new Set(spans.map((s) => s.spanId));
        roots = spans.filter((s) => !ids.has(s.parentSpanId));
        return spans.some((s) => s.service === "baton-notifier") && roots.length === 1;
      },
      "the notifier's span in the submit's trace, and every span's parent in it but the root's",
      30_000,
    );
    expect(roots.map((s) => `${s.service} ${s.kind}`)).toEqual(["baton-gateway 2"]);
  });

  it("/readyz of every service turns unready when its way to PostgreSQL is cut, and ready again when it is restored", async () => {
    const withDatabase = WITH_DATABASE;
    pgProxy.cut();
    try {
      for (const service of withDatabase) {
        await until(async () => (await ops(service, "/readyz")).status === 503, `${service} unready`, 30_000);
        const body = JSON.parse((await ops(service, "/readyz")).text);
        expect(body.ready).toBe(false);
        expect(body.checks.postgres).not.toBe("ok");
        expect(body.checks.nats).toBe("ok");
        // Alive all the same: nothing restarts it.
        expect((await ops(service, "/healthz")).status).toBe(200);
      }
    } finally {
      pgProxy.restore();
    }
    for (const service of withDatabase)
      await until(
        async () => (await ops(service, "/readyz")).status === 200,
        `${service} ready again`,
        60_000,
      );
  });

  it("SIGTERM makes a service unready at once, then it drains and exits", async () => {
    const extra = baton.serve("registry", { BATON_DRAIN_DELAY_MS: "1500" });
    await until(
      async () => {
        try {
          return (await get(`${baton.opsUrl(extra)}/readyz`)).status === 200;
        } catch {
          return false;
        }
      },
      "the second registry ready",
      60_000,
    );
    extra.kill("SIGTERM");
    await until(
      async () => (await get(`${baton.opsUrl(extra)}/readyz`)).status === 503,
      "unready on SIGTERM",
      5_000,
      20,
    );
    const body = JSON.parse((await get(`${baton.opsUrl(extra)}/readyz`)).text);
    expect(body).toMatchObject({ ready: false, draining: true });
    expect(extra.exitCode).toBeNull();
    expect(await exited(extra, 30_000)).toBe(0);
  });
});
