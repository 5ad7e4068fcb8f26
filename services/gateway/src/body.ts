import { numberProblem } from "@baton/process";
import { isLosslessNumber, parse as parseLossless } from "lossless-json";

/**
 * Reading a request body as JSON without losing anything and without letting one body hurt the
 * server: numbers are checked for exactness (ARCHITECTURE "Numbers are never rounded"), nesting is
 * bounded (a value nested thousands of levels deep overflows every recursive JSON walker — parsing,
 * hashing, cloning — so it must never reach a run), and JSON-RPC batches are refused (MCP 2025-06-18
 * removed them, and a batch would hide its calls' arguments from these checks).
 */

/** How many levels of objects and arrays tool arguments may nest, the arguments object being level 1. */
export const MAX_ARGUMENT_DEPTH = 64;

/** Beyond this depth a body is not parsed at all. */
const MAX_BODY_DEPTH = 512;

/** A place in the body that breaks a limit, by JSON path (`params.arguments.inputs.amount`). */
export interface BodyProblem {
  path: string;
  problem: string;
}

/** A parsed body, or why it could not be read (as a JSON-RPC error). */
export type ParsedBody =
  | { kind: "json"; value: unknown; problems: BodyProblem[] }
  | { kind: "error"; status: number; code: number; message: string };

/** The deepest nesting of `[`/`{` in JSON text, outside strings; an iterative scan that cannot overflow. */
function maxDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 125 || c === 93) depth--;
  }
  return max;
}

const ARGUMENTS = "params.arguments";

/**
 * Parses a JSON-RPC request body. Inexact numbers and over-deep nesting inside `params.arguments`
 * become {@link BodyProblem}s for the tool call to refuse as `invalid`; anything that cannot be read
 * at all becomes a JSON-RPC error: `-32700` for malformed JSON (including duplicate keys, whose
 * meaning differs between readers), `-32600` for batches and absurd nesting.
 */
export function parseBody(text: string): ParsedBody {
  const depth = maxDepth(text);
  if (depth > MAX_BODY_DEPTH) {
    return {
      kind: "error",
      status: 400,
      code: -32600,
      message: `Invalid Request: the JSON nests ${depth} levels deep; tool arguments may nest at most ${MAX_ARGUMENT_DEPTH} levels`,
    };
  }
  let raw: unknown;
  try {
    raw = parseLossless(text);
  } catch (error) {
    return {
      kind: "error",
      status: 400,
      code: -32700,
      message: `Parse error: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (Array.isArray(raw)) {
    return {
      kind: "error",
      status: 400,
      code: -32600,
      message:
        "Invalid Request: JSON-RPC batches are not accepted (MCP 2025-06-18 removed them); send one request per POST",
    };
  }
  const problems: BodyProblem[] = [];
  const walk = (v: unknown, path: string, argDepth: number): unknown => {
    if (isLosslessNumber(v)) {
      const source = v.value;
      const problem = numberProblem(source, Number(source));
      if (problem && path.startsWith(`${ARGUMENTS}.`))
        problems.push({ path, problem: `${problem}; send it as a string or as a number JSON holds exactly` });
      return Number(source);
    }
    if (v === null || typeof v !== "object") return v;
    const inside = path === ARGUMENTS || path.startsWith(`${ARGUMENTS}.`) || path.startsWith(`${ARGUMENTS}[`);
    const level = inside ? argDepth + 1 : 0;
    if (inside && level > MAX_ARGUMENT_DEPTH) {
      problems.push({
        path,
        problem: `nests deeper than ${MAX_ARGUMENT_DEPTH} levels; flatten it or store it elsewhere and pass a reference`,
      });
      return null;
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${path}[${i}]`, level));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      // `__proto__` would set the object's prototype in every JavaScript reader after this one and
      // vanish as a field, so it could never be refused as undeclared: refuse it here by name.
      if (k === "__proto__") {
        if (inside) problems.push({ path: `${path}.__proto__`, problem: "not an allowed key" });
        continue;
      }
      out[k] = walk(x, path ? `${path}.${k}` : k, level);
    }
    return out;
  };
  return { kind: "json", value: walk(raw, "", 0), problems };
}

/** The problems under `params.arguments`, with paths relative to the arguments (`inputs.amount`). */
export function argumentProblems(body: ParsedBody): BodyProblem[] {
  if (body.kind !== "json") return [];
  return body.problems.map((p) => ({ path: p.path.slice(ARGUMENTS.length + 1), problem: p.problem }));
}
