import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

/**
 * The conformance scenarios see the server only through the harness's target (issue #18: the runner
 * `baton conformance` runs them against any server): following the imports of every source of
 * `libs/conformance/src/` (the scenarios, the harness, the items, the MCP client and the runner; not
 * the package's own unit tests),
 * nothing reaches Baton's services, its deployment helpers or its storage — only the MCP client, the
 * wire shapes, the process parser, vitest and small helpers that depend on nothing else.
 */

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const LIB = join(REPO, "libs/conformance/src");
/** Packages the package may use: the MCP client and its schema check, the wire shapes, the parser (for publishing fixtures), vitest. */
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
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")
        ? [join(dir, e.name)]
        : [],
  );
}

it("the conformance package imports only the MCP client, the wire shapes, the parser, vitest and its own files (issue #18)", () => {
  const reached = new Set<string>();
  const problems: string[] = [];
  const walk = (file: string) => {
    if (reached.has(file)) return;
    reached.add(file);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(
      /^(?:import|export)\b[^;]*?from "([^"]+)";|\bimport\("([^"]+)"\)/gms,
    )) {
      const name = spec as string | undefined;
      if (name === undefined) continue;
      if (name.startsWith(".")) walk(resolve(dirname(file), name));
      else if (!name.startsWith("node:") && !PACKAGES.some((p) => name === p || name.startsWith(`${p}/`)))
        problems.push(`${relative(REPO, file)} imports ${name}`);
    }
  };
  for (const entry of sources(LIB)) walk(entry);
  const outside = [...reached]
    .map((f) => relative(REPO, f))
    .filter((f) => !f.startsWith("libs/conformance/src/"));
  expect(outside).toEqual([]);
  expect(problems).toEqual([]);
  expect(reached.size).toBeGreaterThan(20);
});
