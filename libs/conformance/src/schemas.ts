import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ToolName, ToolResult } from "@baton/protocol";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/**
 * Validates real responses against the official JSON Schemas (`conformance/schemas/core-2`), as the
 * bar requires: "every response validates against the official schemas". Where a schema disagrees
 * with the tool contracts, tools.md wins; those places are listed in
 * `conformance/schema-deviations.md` and applied here as named patches ({@link SCHEMA_PATCHES}),
 * never silently.
 */

const ROOT = fileURLToPath(new URL("../../../conformance/schemas/core-2/", import.meta.url));
const BASE = "https://agentprocess.io/schemas/core-2/";

function load(dir: string, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) load(path, out);
    else if (entry.name.endsWith(".json") && entry.name !== "index.json")
      out.push(JSON.parse(readFileSync(path, "utf8")));
  }
  return out;
}

/**
 * The patches of `conformance/schema-deviations.md`, keyed by schema `$id` and named by the entry they
 * apply. Exactly those, nothing else: a response or argument that needs any other change to validate is
 * a bug in Baton or a new deviation to write down first.
 */
export const SCHEMA_PATCHES: Readonly<
  Record<string, { deviation: string; patch: (schema: Record<string, unknown>) => void }>
> = {};

const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, strict: false });
(addFormats as unknown as typeof addFormats.default)(ajv);
for (const schema of load(ROOT)) {
  SCHEMA_PATCHES[schema.$id as string]?.patch(schema);
  ajv.addSchema(schema);
}

const cache = new Map<string, ValidateFunction>();
function validator(id: string): ValidateFunction {
  let v = cache.get(id);
  if (!v) {
    v = ajv.getSchema(`${BASE}${id}`) as ValidateFunction;
    if (!v) throw new Error(`no schema ${id}`);
    cache.set(id, v);
  }
  return v;
}

/** Schema problems of one tool result, `[]` when it validates. */
export function schemaProblems(tool: ToolName, result: ToolResult<unknown>): string[] {
  const problems: string[] = [];
  if (typeof result !== "object" || result === null || typeof result.ok !== "boolean")
    return ["result is not { ok, … }"];
  const keys = Object.keys(result).sort().join(",");
  if (result.ok && keys !== "data,ok") problems.push(`result keys ${keys}, expected data, ok`);
  if (!result.ok && keys !== "error,ok") problems.push(`result keys ${keys}, expected error, ok`);
  const v = result.ok ? validator(`tools/${tool}.result.json`) : validator("tool-error.json");
  const value = result.ok ? result.data : result.error;
  if (!v(value))
    for (const e of v.errors ?? [])
      problems.push(`${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
  return problems;
}

/** Schema problems of a tool's arguments (used to prove our own argument schemas agree). */
export function argumentProblems(tool: ToolName, args: unknown): string[] {
  const v = validator(`tools/${tool}.arguments.json`);
  return v(args) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);
}
