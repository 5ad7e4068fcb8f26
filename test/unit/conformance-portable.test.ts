import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

/**
 * The conformance scenarios see the server only through the harness's target (issue #18 lifts them
 * into a runner that any server can be tested with): following their imports from
 * `test/conformance/scenarios/`, `support.ts` and `items.ts`, nothing reaches Baton's services, its
 * deployment helpers or its storage — only the MCP client, the wire shapes, the process parser and
 * small helpers that depend on nothing else.
 */

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CONFORMANCE = join(REPO, "test/conformance");
/** Packages a scenario may use: the MCP client and its schema check, the wire shapes, the parser (for publishing fixtures). */
const PACKAGES = [
  "vitest",
  "@baton/protocol",
  "@baton/process",
  "@modelcontextprotocol/sdk",
  "ajv",
  "ajv-formats",
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

it("the conformance scenarios import only the MCP client, the wire shapes, the parser and their own helpers (issue #18)", () => {
  const entries = [
    ...sources(join(CONFORMANCE, "scenarios")),
    join(CONFORMANCE, "support.ts"),
    join(CONFORMANCE, "items.ts"),
  ];
  const reached = new Set<string>();
  const problems: string[] = [];
  const walk = (file: string) => {
    if (reached.has(file)) return;
    reached.add(file);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(
      /^(?:import|export)\b[^;]*?from "([^"]+)";/gms,
    )) {
      const name = spec as string;
      if (name.startsWith(".")) walk(resolve(dirname(file), name));
      else if (!name.startsWith("node:") && !PACKAGES.some((p) => name === p || name.startsWith(`${p}/`)))
        problems.push(`${relative(REPO, file)} imports ${name}`);
    }
  };
  for (const entry of entries) walk(entry);
  const outside = [...reached]
    .map((f) => relative(REPO, f))
    .filter((f) => !f.startsWith("test/conformance/") && !f.startsWith("test/support/"));
  expect(outside).toEqual([]);
  expect(problems).toEqual([]);
  // The test support they reach is the MCP client and plain helpers, never the deployments or the clock's admin calls.
  expect(
    [...reached]
      .map((f) => relative(REPO, f))
      .filter((f) => f.startsWith("test/support/"))
      .sort(),
  ).toEqual([
    "test/support/mcp.ts",
    "test/support/schemas.ts",
    "test/support/time.ts",
    "test/support/walk.ts",
  ]);
});
