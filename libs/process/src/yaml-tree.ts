/**
 * Reading the frontmatter (specification §2.1): YAML 1.2 with the core schema only, into a small
 * tree of JSON values that remembers where each value and key stands in the file.
 *
 * What is refused here, each as an issue at its position:
 * - YAML syntax errors and warnings, and more than one YAML document;
 * - a `%YAML` directive naming another version than 1.2;
 * - aliases (`*name`): a few bytes of aliases can expand into gigabytes ("billion laughs"), and
 *   the frontmatter must mean the same to every reader, so values are written out. Anchors alone
 *   (`&name`) change nothing and are ignored;
 * - tags other than the core schema's (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!map`,
 *   `!!seq`) and the non-specific `!` (a scalar under it is text), and a core tag its value does not
 *   fit (`!!int abc`);
 * - merge keys (`<<`): YAML 1.1 only;
 * - keys that are not strings, and duplicate keys;
 * - numbers JSON cannot hold exactly (numbers are never rounded, ARCHITECTURE "Contracts fixed
 *   now"): `.inf` and `.nan`; integer literals beyond ±(2^53−1), the range every JSON parser holds
 *   exactly (I-JSON, RFC 7493); and decimal literals whose value differs from the value of the
 *   shortest round-trip form of the double they parse to (`0.1000000000000000000001`, but not
 *   `1.10`, `1e21` or `0.1`). `-0` is kept; canonical JSON writes it `0`;
 * - strings and keys that hold a lone UTF-16 surrogate, which has no UTF-8 form to hash, or NUL,
 *   which PostgreSQL cannot store (`text.ts`), when a YAML escape (`"\ud800"`, `"\0"`) made them:
 *   such a character written as it is is reported where it stands by `parseProcess`.
 *
 * A refused tag is reported where the tag is written (`description: !!binary aGVsbG8=` at the
 * `!`), not where its value starts: the tag is what to change.
 */

import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  type Node,
  parseAllDocuments,
} from "yaml";
import { clipMessage } from "./issue-limits.ts";
import { show } from "./patterns.ts";
import type { LineIndex, Position } from "./position.ts";
import { unstorableAt } from "./text.ts";
import type { Issue } from "./types.ts";

/** A JSON object read from YAML, with its position (the first key, or `{`). */
export interface LMap extends Position {
  kind: "map";
  entries: LEntry[];
}
/** One key of an {@link LMap}; later duplicates are reported and left out. */
export interface LEntry {
  key: string;
  keyPos: Position;
  value: LNode;
}
/** A JSON array read from YAML. */
export interface LSeq extends Position {
  kind: "seq";
  items: LNode[];
}
/** A JSON scalar read from YAML. */
export interface LScalar extends Position {
  kind: "scalar";
  value: string | number | boolean | null;
}
/** A value already reported as unreadable; validation skips it so nothing cascades. */
export interface LBad extends Position {
  kind: "bad";
}
/** A frontmatter value with its position in the file. */
export type LNode = LMap | LSeq | LScalar | LBad;

const CORE_TAGS = new Set(
  ["str", "int", "float", "bool", "null", "map", "seq"].map((t) => `tag:yaml.org,2002:${t}`),
);
const YAML_PREFIX = "tag:yaml.org,2002:";
const MAX_DEPTH = 64;
const MAX_SAFE = 9_007_199_254_740_991n;

const OPTIONS = {
  version: "1.2",
  schema: "core",
  merge: false,
  uniqueKeys: false,
  prettyErrors: false,
  strict: true,
} as const;

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const showTag = (tag: string) => (tag.startsWith(YAML_PREFIX) ? `!!${tag.slice(YAML_PREFIX.length)}` : tag);

/**
 * The offsets of every tag (`!foo`, `!!binary`, `!`) in YAML `text`, in order. The `yaml` library
 * keeps a node's tag but not where it is written, so the text is lexed again, the way its parser
 * counts offsets: control lexemes (document, flow-end and scalar markers) take no room, and the
 * lexeme after a scalar marker is the scalar's source, never a tag.
 */
function tagOffsets(text: string): number[] {
  const out: number[] = [];
  let offset = 0;
  let atScalar = false;
  for (const lexeme of new Lexer().lex(text)) {
    if (atScalar) {
      atScalar = false;
      offset += lexeme.length;
      continue;
    }
    if (lexeme === "\x1f") {
      atScalar = true;
      continue;
    }
    if (lexeme === "\x02" || lexeme === "\x18") continue;
    if (lexeme.startsWith("!")) out.push(offset);
    offset += lexeme.length;
  }
  return out;
}

/** A decimal number as sign-free digits (no leading or trailing zeros; `""` for zero) × 10^exp. */
interface Decimal {
  digits: string;
  exp: bigint;
}

const DECIMAL = /^[-+]?(?:([0-9]+)(?:\.([0-9]*))?|\.([0-9]+))(?:[eE]([-+]?[0-9]+))?$/;

function toDecimal(text: string): Decimal | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const int = m[1] ?? "";
  const frac = m[2] ?? m[3] ?? "";
  let digits = (int + frac).replace(/^0+/, "");
  let exp = BigInt(m[4] ?? "0") - BigInt(frac.length);
  const trailing = digits.length - digits.replace(/0+$/, "").length;
  digits = digits.slice(0, digits.length - trailing);
  exp += BigInt(trailing);
  return digits === "" ? { digits: "", exp: 0n } : { digits, exp };
}

/**
 * Why a number literal (YAML or JSON) cannot be stored exactly, or null when it can (ARCHITECTURE
 * "Numbers are never rounded"): integers beyond ±(2^53−1), and decimals whose value differs from the
 * shortest round-trip form of the double they parse to. `value` is what the literal parsed to.
 */
export function numberProblem(source: string, value: number): string | null {
  if (!Number.isFinite(value)) return `${source} is not a JSON number; use a finite number`;
  const unsigned = source.replace(/^[-+]/, "");
  let integer: bigint | null = null;
  if (/^0x[0-9a-fA-F]+$/.test(unsigned) || /^0o[0-7]+$/.test(unsigned)) integer = BigInt(unsigned);
  else if (/^[0-9]+$/.test(unsigned)) integer = BigInt(unsigned);
  if (integer !== null) {
    return integer > MAX_SAFE
      ? `integer ${source} is beyond ±9007199254740991, which JSON parsers cannot hold exactly; numbers are never rounded`
      : null;
  }
  const written = toDecimal(source);
  const stored = toDecimal(String(Math.abs(value)));
  if (written === null || stored === null) return `${source} is not a JSON number`;
  if (written.digits !== stored.digits || written.exp !== stored.exp) {
    return `${source} cannot be held exactly as a JSON number (it would become ${String(value)}); numbers are never rounded`;
  }
  return null;
}

class Reader {
  readonly issues: Issue[] = [];
  /** Offsets of the tags in the text; lexed on the first refused tag only. */
  private tags: number[] | null = null;

  constructor(
    private readonly text: string,
    private readonly index: LineIndex,
    private readonly base: number,
  ) {}

  pos(offset: number): Position {
    return this.index.at(this.base + offset);
  }

  issue(at: Position, message: string) {
    this.issues.push({ line: at.line, col: at.col, message: clipMessage(message) });
  }

  /**
   * Where the tag of `node` is written: the last tag before its content (a node's properties come
   * right before it; only an anchor, spaces, comments and line breaks may stand between).
   */
  tagPos(node: Node, fallback: Position): Position {
    if (!node.range) return fallback;
    this.tags ??= tagOffsets(this.text);
    const start = node.range[0];
    let lo = 0;
    let hi = this.tags.length; // first tag at or after start
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.tags[mid] as number) < start) lo = mid + 1;
      else hi = mid;
    }
    const offset = this.tags[lo - 1];
    return offset === undefined ? fallback : this.pos(offset);
  }

  node(node: Node | null | undefined, path: string, fallback: Position, depth: number): LNode {
    const label = path === "" ? "frontmatter" : path;
    if (node === null || node === undefined) return { kind: "scalar", value: null, ...fallback };
    const at = node.range ? this.pos(node.range[0]) : fallback;
    if (depth > MAX_DEPTH) {
      this.issue(at, `${label}: nested more than ${MAX_DEPTH} levels deep`);
      return { kind: "bad", ...at };
    }
    if (isAlias(node)) {
      this.issue(at, `${label}: aliases (*${node.source}) are not allowed; write the value out`);
      return { kind: "bad", ...at };
    }
    const written = (node as { tag?: string }).tag;
    // `!` is YAML's non-specific tag: a scalar is a string, a mapping or list stays what it is.
    const tag =
      written === "!" ? `${YAML_PREFIX}${isMap(node) ? "map" : isSeq(node) ? "seq" : "str"}` : written;
    if (tag !== undefined && !CORE_TAGS.has(tag)) {
      this.issue(
        this.tagPos(node, at),
        `${label}: tag ${showTag(tag)} is not allowed; the frontmatter uses the YAML 1.2 core schema only`,
      );
      return { kind: "bad", ...at };
    }
    if (isScalar(node)) return this.scalar(node, tag, label, at);
    if (isMap(node)) {
      if (tag !== undefined && tag !== `${YAML_PREFIX}map`)
        return this.tagMismatch(tag, label, this.tagPos(node, at));
      const entries: LEntry[] = [];
      const seen = new Set<string>();
      for (const pair of node.items) {
        const keyNode = pair.key as Node | null;
        const keyAt = keyNode?.range ? this.pos(keyNode.range[0]) : at;
        const key = this.key(keyNode, label, keyAt);
        if (key === null) continue;
        const keyPath = path === "" ? key : `${path}.${key}`;
        if (seen.has(key)) {
          this.issue(keyAt, `${keyPath}: duplicate key; each key may appear once`);
          continue;
        }
        seen.add(key);
        entries.push({
          key,
          keyPos: keyAt,
          value: this.node(pair.value as Node | null, keyPath, keyAt, depth + 1),
        });
      }
      return { kind: "map", entries, ...at };
    }
    if (isSeq(node)) {
      if (tag !== undefined && tag !== `${YAML_PREFIX}seq`)
        return this.tagMismatch(tag, label, this.tagPos(node, at));
      const items = node.items.map((item, i) => {
        if (isPair(item)) {
          this.issue(at, `${path}[${i}]: unexpected key-value pair in a list`);
          return { kind: "bad", ...at } as LBad;
        }
        return this.node(item as Node, `${path}[${i}]`, at, depth + 1);
      });
      return { kind: "seq", items, ...at };
    }
    this.issue(at, `${label}: unsupported YAML node`);
    return { kind: "bad", ...at };
  }

  /**
   * Why the text or key `value` of `node` cannot be stored, when a YAML escape put the character
   * there (`"\ud800"`, `"\0"`); null when it can, or when the character is written as it is in the
   * file, which `parseProcess` reports at the character itself.
   */
  escapedProblem(node: Node, value: string, what: "text" | "key"): string | null {
    const at = unstorableAt(value);
    if (at === -1) return null;
    if (node.range && unstorableAt(this.text.slice(node.range[0], node.range[1])) !== -1) return null;
    return value.charCodeAt(at) === 0
      ? `${what} contains NUL (\\u0000), which PostgreSQL cannot store`
      : `${what} contains a lone surrogate, which has no UTF-8 form`;
  }

  tagMismatch(tag: string, label: string, at: Position): LBad {
    this.issue(at, `${label}: the value does not fit its tag ${showTag(tag)}`);
    return { kind: "bad", ...at };
  }

  scalar(
    node: Node & { value: unknown; source?: unknown },
    tag: string | undefined,
    label: string,
    at: Position,
  ): LNode {
    let { value, source } = node;
    const expected = tag === undefined ? undefined : tag.slice(YAML_PREFIX.length);
    // The core schema's float form includes plain integers (`!!float 1` is 1), which the yaml
    // library leaves as text under an explicit tag.
    if (expected === "float" && typeof value === "string" && /^[-+]?[0-9]+$/.test(value)) {
      source = value;
      value = Number(value);
    }
    const fits =
      expected === undefined ||
      (expected === "str" && typeof value === "string") ||
      ((expected === "int" || expected === "float") && typeof value === "number") ||
      (expected === "bool" && typeof value === "boolean") ||
      (expected === "null" && value === null);
    if (!fits) return this.tagMismatch(tag as string, label, this.tagPos(node, at));
    if (typeof value === "string") {
      const problem = this.escapedProblem(node, value, "text");
      if (problem !== null) {
        this.issue(at, `${label}: ${problem}`);
        return { kind: "bad", ...at };
      }
      return { kind: "scalar", value, ...at };
    }
    if (typeof value === "number") {
      const problem = numberProblem(typeof source === "string" ? source : String(value), value);
      if (problem !== null) {
        this.issue(at, `${label}: ${problem}`);
        return { kind: "bad", ...at };
      }
      return { kind: "scalar", value, ...at };
    }
    if (typeof value === "boolean" || value === null) return { kind: "scalar", value, ...at };
    this.issue(at, `${label}: unsupported YAML value`);
    return { kind: "bad", ...at };
  }

  /** The key as a string, or null after reporting why it cannot be one. */
  key(node: Node | null, label: string, at: Position): string | null {
    if (node === null || !isScalar(node) || (node.tag !== undefined && node.tag !== `${YAML_PREFIX}str`)) {
      if (node !== null && isAlias(node))
        this.issue(at, `${label}: aliases (*${node.source}) are not allowed`);
      else if (node !== null && node.tag !== undefined)
        this.issue(this.tagPos(node, at), `${label}: keys must be plain text`);
      else this.issue(at, `${label}: keys must be plain text`);
      return null;
    }
    if (typeof node.value !== "string") {
      this.issue(at, `${label}: key ${show(node.value)} is not text; keys must be strings`);
      return null;
    }
    if (node.value === "<<" && node.type === "PLAIN") {
      this.issue(at, `${label}: merge keys (<<) are not allowed; write the keys out`);
      return null;
    }
    const problem = this.escapedProblem(node, node.value, "key");
    if (problem !== null) {
      this.issue(at, `${label}: ${problem}`);
      return null;
    }
    return node.value;
  }
}

/**
 * Reads frontmatter text that starts at offset `base` of the file. Returns the tree (null when
 * there is nothing to validate) and every issue found reading it. Never throws.
 */
export function readFrontmatter(
  text: string,
  base: number,
  index: LineIndex,
): { root: LNode | null; issues: Issue[] } {
  const reader = new Reader(text, index, base);
  const start = reader.pos(0);
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(text, OPTIONS) as Document.Parsed[];
  } catch (error) {
    reader.issue(
      start,
      `frontmatter: cannot be read as YAML (${error instanceof Error ? error.message : "error"})`,
    );
    return { root: null, issues: reader.issues };
  }
  const stream = docs as unknown as { errors?: { message: string; pos: [number, number] }[] };
  for (const e of stream.errors ?? [])
    reader.issue(reader.pos(e.pos[0]), `frontmatter: ${lowerFirst(e.message)}`);
  if (docs.length === 0) return { root: null, issues: reader.issues };
  if (docs.length > 1) {
    const second = docs[1] as Document.Parsed;
    reader.issue(reader.pos(second.range[0]), `frontmatter: must be one YAML document; found ${docs.length}`);
    return { root: null, issues: reader.issues };
  }
  const doc = docs[0] as Document.Parsed;
  // One issue per kind of syntax error: a broken file can repeat the same error thousands of times.
  const reported = new Set<string>();
  for (const e of doc.errors) {
    const message = /call stack/i.test(e.message) ? "nested too deeply" : lowerFirst(e.message);
    if (reported.has(message)) continue;
    reported.add(message);
    reader.issue(reader.pos(e.pos[0]), `frontmatter: ${message}`);
  }
  if (doc.errors.length > 0) return { root: null, issues: reader.issues };
  for (const w of doc.warnings) {
    // Tags are judged node by node below, with the key path in the message.
    if (w.code !== "TAG_RESOLVE_FAILED")
      reader.issue(reader.pos(w.pos[0]), `frontmatter: ${lowerFirst(w.message)}`);
  }
  const yamlDirective = doc.directives?.yaml;
  if (yamlDirective?.explicit && yamlDirective.version !== "1.2") {
    reader.issue(
      start,
      `frontmatter: %YAML ${yamlDirective.version} is not allowed; the frontmatter is YAML 1.2`,
    );
  }
  const root = reader.node(doc.contents as Node | null, "", start, 0);
  return { root, issues: reader.issues };
}

/** The plain JSON value of a tree without `bad` nodes. `__proto__` keys stay own properties. */
export function toJson(node: LNode): unknown {
  switch (node.kind) {
    case "scalar":
      return node.value;
    case "seq":
      return node.items.map(toJson);
    case "map": {
      const out: Record<string, unknown> = {};
      for (const e of node.entries) {
        Object.defineProperty(out, e.key, {
          value: toJson(e.value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    case "bad":
      return null;
    default: {
      const never: never = node;
      return never;
    }
  }
}
