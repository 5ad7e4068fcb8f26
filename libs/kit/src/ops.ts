// A service's operations server (issue #13): `/healthz`, `/readyz` and `/metrics` on `BATON_OPS_PORT`.
import Fastify, { type FastifyInstance } from "fastify";
import type { Logger } from "./logger.ts";
import { collectProcessMetrics, METRICS_CONTENT_TYPE, metricsText } from "./metrics.ts";

/** A readiness probe: resolves when the dependency it names answers, throws (or times out) when not. */
export type Probe = () => Promise<void>;

/** How long one probe may take before it counts as failed, ms. */
const PROBE_TIMEOUT_MS = 2_000;

/** What `/readyz` answers: `ready`, and each check's `ok` or the reason it failed. */
export interface Readiness {
  ready: boolean;
  /** Set once the service was told to stop (SIGTERM): it answers what is in flight and takes nothing new. */
  draining: boolean;
  checks: Record<string, string>;
}

/**
 * A service's readiness (`/readyz`): the checks its start function adds (PostgreSQL, NATS, S3 where
 * it uses it, an engine's partition ownership; never Redis, which decides no outcome) and whether it
 * is draining. Each check runs when asked, all at once, each within 2 s.
 */
export class Health {
  private readonly probes = new Map<string, Probe>();
  private stopping = false;
  private started = false;

  /** Marks the service started: until then `/readyz` answers 503 (`starting`), whatever its checks say. */
  serving(): void {
    this.started = true;
  }

  /** Adds (or replaces) the check `name`, e.g. `postgres`, `nats`, `s3`, `partitions`. */
  add(name: string, probe: Probe): void {
    this.probes.set(name, probe);
  }

  /** The names of the checks, in the order they were added. */
  get names(): string[] {
    return [...this.probes.keys()];
  }

  /** Marks the service unready for good: it was told to stop (SIGTERM), and drains next. */
  drain(): void {
    this.stopping = true;
  }

  get draining(): boolean {
    return this.stopping;
  }

  /** Runs every check now. */
  async report(): Promise<Readiness> {
    const checks: Record<string, string> = {};
    await Promise.all(
      [...this.probes].map(async ([name, probe]) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            probe(),
            new Promise<never>((_, reject) => {
              timer = setTimeout(
                () => reject(new Error(`no answer in ${PROBE_TIMEOUT_MS} ms`)),
                PROBE_TIMEOUT_MS,
              );
            }),
          ]);
          checks[name] = "ok";
        } catch (error) {
          checks[name] = error instanceof Error ? error.message : String(error);
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    if (!this.started) checks.service = "starting: not serving yet";
    const failed = Object.values(checks).some((v) => v !== "ok");
    return { ready: !this.stopping && !failed, draining: this.stopping, checks };
  }
}

/**
 * Adds `/healthz` (alive: 200 while the process serves HTTP), `/readyz` (200 `{ ready: true, checks }`
 * when every check of `health` passes and the service is not draining, else 503 with each failing
 * check's reason) and `/metrics` (Prometheus text, prom-client's process metrics included) to `app`.
 * `baton dev` adds them to its public server; `baton serve` to its operations server.
 */
export function registerOpsRoutes(app: FastifyInstance, health: Health, options: { healthz?: boolean } = {}) {
  collectProcessMetrics();
  if (options.healthz !== false) app.get("/healthz", async () => ({ ok: true }));
  app.get("/readyz", async (_request, reply) => {
    const readiness = await health.report();
    return reply.code(readiness.ready ? 200 : 503).send(readiness);
  });
  app.get("/metrics", async (_request, reply) =>
    reply.header("Content-Type", METRICS_CONTENT_TYPE).send(await metricsText()),
  );
}

/** A listening operations server. */
export interface OpsServer {
  /** The port it listens on (the one asked for, or the one picked for 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * Starts a service's operations server on `host`:`port` (`BATON_OPS_PORT`; 0 picks a free port, which
 * is logged) with {@link registerOpsRoutes}. It is apart from the gateway's public port, so metrics
 * and readiness are never exposed to agents. Throws when the port is taken.
 */
export async function startOpsServer(options: {
  host: string;
  port: number;
  health: Health;
  log: Logger;
}): Promise<OpsServer> {
  const app = Fastify({ logger: false });
  registerOpsRoutes(app, options.health);
  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      code === "EADDRINUSE"
        ? `BATON_OPS_PORT=${options.port}: the port is in use (another service on this host?); set BATON_OPS_PORT to a free port, 0 for any free one, or off`
        : `BATON_OPS_PORT=${options.port}: the operations server cannot listen: ${String(error)}`,
    );
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  options.log.info({ port, paths: ["/healthz", "/readyz", "/metrics"] }, "operations server listening");
  return { port, close: () => app.close() };
}
