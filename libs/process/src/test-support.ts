/**
 * Helpers for this package's unit tests (not exported from the package): small PROCESS.md files
 * built from frontmatter lines, and issues flattened to `line:col message` strings so a table can
 * state exactly what a file must produce.
 */

import { parseProcess } from "./parse.ts";
import type { Process } from "./types.ts";

/** The first three lines of every test file: lines 1–3; the lines given to {@link doc} start at line 4. */
export const HEAD = ["---", "name: demo", "description: A demo process."];

/** A PROCESS.md with `name: demo`, a description, then `lines` (from file line 4), and a short body. */
export function doc(lines: readonly string[]): string {
  return `${[...HEAD, ...lines, "---"].join("\n")}\n# Demo\n`;
}

/** The issues of parsing `text`, each as `line:col message`; `[]` when it parses. */
export function issuesOf(text: string, folderName?: string): string[] {
  const result = parseProcess(text, folderName === undefined ? {} : { folderName });
  return result.ok ? [] : result.issues.map((i) => `${i.line}:${i.col} ${i.message}`);
}

/** Parses `text` and returns the process, failing the test with the issues when it does not parse. */
export function processOf(text: string): Process {
  const result = parseProcess(text);
  if (!result.ok)
    throw new Error(
      `expected a valid process, got:\n${result.issues.map((i) => `${i.line}:${i.col} ${i.message}`).join("\n")}`,
    );
  return result.process;
}

/** One row of a rule table: a rule, the section it comes from, the file's lines, the exact issues. */
export interface RuleCase {
  rule: string;
  lines: readonly string[];
  issues: readonly string[];
}

/** A file whose only step is a finish, with `lines` spliced in before `steps:` (e.g. inputs). */
export const FINISH_ONLY = ["steps:", "  - id: done", "    finish: ok"];
