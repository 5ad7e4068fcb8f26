import { numberProblem, showUnstorable, textProblem } from "@baton/process";
import { isLosslessNumber, parse as parseLossless } from "lossless-json";
import { MAX_FIELDS, MAX_KEY_CHARS } from "./limits.ts";

/**
 * Reading a request body as JSON without losing anything and without letting one body hurt the
 * server, in the one walk the body gets: numbers are checked for exactness (ARCHITECTURE "Numbers
 * are never rounded"), every string and key for text Baton can store and hash exactly (no lone
 * surrogate, no NUL: issue #8, `@baton/process` `text.ts`), nesting is bounded (a value nested
 * thousands of levels deep overflows every recursive JSON walker — parsing, hashing, cloning — so it
 * must never reach a run), and JSON-RPC batches are refused (MCP 2025-06-18 removed them, and a batch
 * would hide its calls' arguments from these checks). What breaks a limit can never be stored by
 * waiting, so it becomes `invalid` at this edge, never `retry` further in (§4.3).
 */

/** How many levels of objects and arrays checked values may nest, the checked root being level 1. */
export const MAX_ARGUMENT_DEPTH = 64;

/** Beyond this depth a body is not parsed at all. */
const MAX_BODY_DEPTH = 512;

/**
 * A place in the body that breaks a limit, by JSON path (`params.arguments.inputs.amount`); a key
 * Baton cannot store appears in paths with that character escaped (`inputs.k\ud800`).
 */
export interface BodyProblem {
  path: string;
  problem: string;
}

/** A parsed body, or why it could not be read (as a JSON-RPC error). */
export type ParsedBody =
  | { kind: "json"; value: unknown; problems: BodyProblem[] /** UTF-8 bytes of the body. */; bytes: number }
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

/** Where a tool call's arguments are in a JSON-RPC body: the root {@link parseBody} checks on `/mcp`. */
export const ARGUMENTS = "params.arguments";

/**
 * Parses a JSON request body. Inexact numbers, strings and keys Baton cannot store, and over-deep
 * nesting at or under `root` (a JSON path; `""` is the whole body, as the admin API checks it)
 * become {@link BodyProblem}s, for the tool call or admin call to refuse as `invalid`; anything that
 * cannot be read at all becomes a JSON-RPC error: `-32700` for malformed JSON (including duplicate
 * keys, whose meaning differs between readers), `-32600` for batches and absurd nesting.
 */
export function parseBody(text: string, root: string = ARGUMENTS): ParsedBody {
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
  // `inside`: `path` is `root` or under it. `level`: how deep `v` nests under `root` (`root` is 1).
  const walk = (v: unknown, path: string, inside: boolean, level: number): unknown => {
    if (typeof v === "string") {
      if (inside) {
        const problem = textProblem(v);
        if (problem !== null) problems.push({ path, problem });
      }
      return v;
    }
    if (isLosslessNumber(v)) {
      const source = v.value;
      const problem = inside ? numberProblem(source, Number(source)) : null;
      if (problem !== null)
        problems.push({ path, problem: `${problem}; send it as a string or as a number JSON holds exactly` });
      return Number(source);
    }
    if (v === null || typeof v !== "object") return v;
    const within = inside || path === root;
    const depth = within ? level + 1 : 0;
    if (within && depth > MAX_ARGUMENT_DEPTH) {
      problems.push({
        path,
        problem: `nests deeper than ${MAX_ARGUMENT_DEPTH} levels; flatten it or store it elsewhere and pass a reference`,
      });
      return null;
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${path}[${i}]`, within, depth));
    const out: Record<string, unknown> = {};
    const entries = Object.entries(v);
    // Issue #12: every object is hashed, copied and checked field by field further in.
    if (within && entries.length > MAX_FIELDS)
      problems.push({ path: path || "arguments", problem: `at most ${MAX_FIELDS} fields (server limit)` });
    for (const [k, x] of entries) {
      // `__proto__` would set the object's prototype in every JavaScript reader after this one and
      // vanish as a field, so it could never be refused as undeclared: refuse it here by name.
      if (k === "__proto__") {
        if (within) problems.push({ path: `${path}.__proto__`, problem: "not an allowed key" });
        continue;
      }
      let name = k;
      if (within) {
        const problem = textProblem(k, true);
        if (problem !== null) {
          name = showUnstorable(k);
          problems.push({ path: path ? `${path}.${name}` : name, problem });
        }
        if (k.length > MAX_KEY_CHARS) {
          name = `${name.slice(0, 40)}…`;
          problems.push({
            path: path ? `${path}.${name}` : name,
            problem: `key of ${k.length} characters; at most ${MAX_KEY_CHARS} (server limit)`,
          });
        }
      }
      out[k] = walk(x, path ? `${path}.${name}` : name, within, depth);
    }
    return out;
  };
  return { kind: "json", value: walk(raw, "", root === "", 0), problems, bytes: Buffer.byteLength(text) };
}

/**
 * The problems of a body parsed with the root {@link ARGUMENTS}, with paths relative to the
 * arguments (`inputs.amount`; `arguments` for the arguments value itself).
 */
export function argumentProblems(body: ParsedBody): BodyProblem[] {
  if (body.kind !== "json") return [];
  return body.problems.map((p) => ({
    path: p.path === ARGUMENTS ? "arguments" : p.path.slice(ARGUMENTS.length + 1),
    problem: p.problem,
  }));
}
