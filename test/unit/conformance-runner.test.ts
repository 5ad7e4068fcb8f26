import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checklistItems, TOOL_ERRORS } from "@baton/conformance/items";
import type { ListedCheck } from "@baton/conformance/runner/index";
import { expect, it } from "vitest";
import { readSources } from "../../scripts/conformance-matrix.ts";

/**
 * Every item docs/conformance-matrix.md proves over MCP — each checklist item and each tool error —
 * is proven by a check of the portable runner too (issue #18): `baton conformance --list --json`
 * names every check it would run, and some check carries each item's tag. (The matrix's third part,
 * the §2 rule table, is the process library's unit tests: rules of Baton's parser, not calls a
 * runner can make.)
 */

const REPO = fileURLToPath(new URL("../../", import.meta.url));

it("every checklist item and tool error of the conformance matrix maps to a check of baton conformance (issue #18)", () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST")));
  const listed = spawnSync(
    process.execPath,
    ["--import", "tsx", join(REPO, "services/cli/src/main.ts"), "conformance", "--list", "--json"],
    { cwd: REPO, env, encoding: "utf8", timeout: 170_000 },
  );
  expect(listed.status, listed.stderr).toBe(0);
  const checks = JSON.parse(listed.stdout) as ListedCheck[];
  expect(checks.length).toBeGreaterThan(90);
  const tagged = new Set(checks.flatMap((c) => c.tags));
  const items = [
    ...checklistItems(readSources().checklist).map((i) => i.id),
    ...TOOL_ERRORS.map((e) => e.id),
  ];
  expect(items.length).toBe(173 + 60);
  expect(items.filter((id) => !tagged.has(id))).toEqual([]);
  // Each check names the spec sections or the tool contract it proves, in its title.
  expect(
    checks.filter((c) => c.tags.length === 0 && !/§|tools\.md|\.md/.test(c.title)).map((c) => c.name),
  ).toEqual([]);
}, 180_000);
