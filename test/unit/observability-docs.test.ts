import { readFileSync } from "node:fs";
import { metricsRegistry } from "@baton/kit";
import { describe, expect, it } from "vitest";

/**
 * Issue #13: docs/observability.md names every Baton metric the services export, and the Grafana
 * dashboard in deploy/ queries only metrics that exist, so the docs, the dashboard and the code
 * cannot drift apart.
 */
const root = new URL("../../", import.meta.url);
const docs = readFileSync(new URL("docs/observability.md", root), "utf8");
const dashboard = JSON.parse(readFileSync(new URL("deploy/grafana-dashboard.json", root), "utf8")) as {
  panels: { targets: { expr: string }[] }[];
};

describe("observability docs and dashboard (issue #13)", () => {
  const names = metricsRegistry.getMetricsAsArray().map((m) => m.name);

  it("docs/observability.md lists every baton_* metric", () => {
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const name of names) expect(docs).toContain(`\`${name}\``);
  });

  it("the Grafana dashboard queries only baton_* metrics that exist", () => {
    const queried = new Set(
      dashboard.panels.flatMap((p) =>
        p.targets.flatMap((t) =>
          [...t.expr.matchAll(/\b(baton_[a-z_]+?)(?:_bucket|_count|_sum)?\b/g)].map((m) => m[1]),
        ),
      ),
    );
    expect(queried.size).toBeGreaterThanOrEqual(8);
    for (const name of queried) expect(names).toContain(name);
  });
});
