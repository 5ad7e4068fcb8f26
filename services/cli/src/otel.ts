// Registers OpenTelemetry before anything else loads (issue #13): `node --import <this module> main.js serve <service>`.
//
// Loaded with `--import`, so it runs before the CLI imports `pg`: the `pg` instrumentation patches
// `pg` only when it is loaded after this module registered the ESM hook and started the SDK. When no
// OTLP endpoint is configured it loads nothing and returns: tracing off costs nothing.
import { register } from "node:module";
import { enableTracing, setTracingShutdown } from "@baton/kit";

/**
 * Whether the standard OpenTelemetry variables ask for traces: an OTLP endpoint is set
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), `OTEL_SDK_DISABLED` is not
 * `true` and `OTEL_TRACES_EXPORTER` is not `none`.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === "true" || env.OTEL_TRACES_EXPORTER === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** The service this process runs (`baton serve <service>`, `baton dev`), for `service.name`. */
function serviceName(argv: string[]): string {
  const at = argv.indexOf("serve");
  if (at >= 0 && argv[at + 1]) return `baton-${argv[at + 1]}`;
  return argv.includes("dev") ? "baton-dev" : "baton";
}

if (tracingWanted()) {
  // Only `pg` (and its pool) are wrapped by the ESM hook; `http` is a built-in the SDK patches itself.
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url, {
    data: { include: ["pg", "pg-pool"] },
  });
  process.env.OTEL_SERVICE_NAME ??= serviceName(process.argv);
  // Metrics are Prometheus's (`/metrics`), logs are stdout's: the SDK exports traces only.
  process.env.OTEL_METRICS_EXPORTER ??= "none";
  process.env.OTEL_LOGS_EXPORTER ??= "none";
  const [api, { NodeSDK }, { HttpInstrumentation }, { PgInstrumentation }] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/sdk-node"),
    import("@opentelemetry/instrumentation-http"),
    import("@opentelemetry/instrumentation-pg"),
  ]);
  const sdk = new NodeSDK({
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes are not traced: one span per kubelet probe would drown the rest.
        ignoreIncomingRequestHook: (request) => /^\/(healthz|readyz|metrics)\b/.test(request.url ?? ""),
      }),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  enableTracing(api);
  setTracingShutdown(() => sdk.shutdown());
}
