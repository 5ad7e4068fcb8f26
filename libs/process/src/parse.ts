/**
 * `parseProcess`: PROCESS.md text in, a valid {@link Process} or every issue out (specification §2,
 * §6 rule 5; "Implementing a process server" Step 1).
 */

import { contentHash } from "./hash.ts";
import { clipMessage, limitIssues } from "./issue-limits.ts";
import { LineIndex } from "./position.ts";
import { splitFile } from "./split.ts";
import { unstorableCharacters } from "./text.ts";
import type { Issue, ParseResult } from "./types.ts";
import { validateFrontmatter } from "./validate.ts";
import { readFrontmatter } from "./yaml-tree.ts";

/** Options of {@link parseProcess}. */
export interface ParseOptions {
  /**
   * The folder the file was imported from. When given, `name` must equal it (§2.1: "an importer
   * given a folder refuses a mismatch").
   */
  folderName?: string;
}

const byPosition = (a: Issue, b: Issue) => a.line - b.line || a.col - b.col;

function parseUnguarded(text: string, options: ParseOptions): ParseResult {
  if (typeof text !== "string") {
    return { ok: false, issues: [{ line: 1, col: 1, message: "frontmatter: the file is not text" }] };
  }
  const split = splitFile(text);
  if (!split.ok) {
    const index = new LineIndex(split.problem.text);
    const at = index.at(split.problem.offset);
    return { ok: false, issues: [{ ...at, message: split.problem.message }] };
  }
  const file = split.file;
  const index = new LineIndex(file.text);
  const issues: Issue[] = [];
  const bodyOffset = file.text.length - file.body.length;
  // A character Baton cannot store (a lone surrogate, NUL) is refused where it stands, in the
  // frontmatter (comments included) or the body: the file is stored as it was written.
  for (const bad of unstorableCharacters(file.text)) {
    const part = bad.index >= bodyOffset ? "body" : "frontmatter";
    issues.push({ ...index.at(bad.index), message: `${part}: ${bad.problem}` });
  }
  const read = readFrontmatter(file.frontmatter, file.frontmatterOffset, index);
  issues.push(...read.issues);
  let result: ReturnType<typeof validateFrontmatter> | null = null;
  if (read.root === null) {
    if (read.issues.length === 0) {
      issues.push({
        ...index.at(file.frontmatterOffset),
        message: "frontmatter: expected a mapping with name, description and steps",
      });
    }
  } else {
    result = validateFrontmatter(read.root, { folderName: options.folderName });
    issues.push(...result.issues);
  }
  if (issues.length > 0 || result?.process == null) {
    return { ok: false, issues: limitIssues(issues.sort(byPosition)) };
  }
  const parts = result.process;
  return {
    ok: true,
    process: { ...parts, body: file.body, contentHash: contentHash(parts.frontmatter, file.body) },
  };
}

/**
 * Parses and validates one PROCESS.md file.
 *
 * - Splits frontmatter and body (ARCHITECTURE "Contracts fixed now"): one leading BOM dropped; the
 *   first line exactly `---`, the frontmatter ending at the next line exactly `---` (each may end
 *   in `\r`); the body is everything after that line's line ending, byte for byte.
 * - Reads the frontmatter as YAML 1.2, core schema only, refusing duplicate keys, aliases, non-core
 *   tags, merge keys, multiple documents and numbers JSON cannot hold exactly (see `yaml-tree.ts`).
 * - Validates every rule of §2.1–§2.4 and of the parallel and check profiles' keys (see
 *   `validate.ts`, `graph.ts`), and, when `options.folderName` is given, that `name` equals it.
 *
 * Returns `{ ok: true, process }` with the content hash of §6 rule 5, or `{ ok: false, issues }`
 * with every issue found, sorted by position, up to a bound (see `issue-limits.ts`): at most 200
 * issues, then one saying how many more there were; each message at most 500 characters. Each issue has a 1-based `line` and `col` in the whole
 * file (frontmatter line 1 is file line 2; columns count UTF-16 code units) and a `message` that
 * names the key path (`steps[2].next: unknown step "aprove"`). Never throws, for any string.
 */
export function parseProcess(text: string, options: ParseOptions = {}): ParseResult {
  try {
    return parseUnguarded(text, options);
  } catch (error) {
    // A bug must not take down an importer; the message says what happened.
    const detail = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      issues: [{ line: 1, col: 1, message: clipMessage(`frontmatter: could not be parsed (${detail})`) }],
    };
  }
}
