import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { decodeProcessFile, formatIssue, parseProcess } from "@baton/process";

/** One validated file. */
export interface Validated {
  path: string;
  ok: boolean;
  name?: string;
  contentHash?: string;
  issues: { line: number; col: number; message: string }[];
}

/**
 * `baton validate <PROCESS.md or folder>…` (§2): a folder is read as `<folder>/PROCESS.md` and its
 * name must equal the process `name` (§2.1); a file is checked on its own.
 */
export function validatePaths(paths: string[]): Validated[] {
  return paths.map((p): Validated => {
    const isDir = existsSync(p) && statSync(p).isDirectory();
    const file = isDir ? join(p, "PROCESS.md") : p;
    if (!existsSync(file))
      return { path: file, ok: false, issues: [{ line: 1, col: 1, message: "no such file" }] };
    const decoded = decodeProcessFile(readFileSync(file));
    if (!decoded.ok) return { path: file, ok: false, issues: decoded.issues };
    // `resolve` first, so `baton validate .` inside the folder checks the folder's real name.
    const parsed = parseProcess(decoded.text, isDir ? { folderName: basename(resolve(p)) } : {});
    return parsed.ok
      ? {
          path: file,
          ok: true,
          name: parsed.process.name,
          contentHash: parsed.process.contentHash,
          issues: [],
        }
      : { path: file, ok: false, issues: parsed.issues };
  });
}

/** Human output: `path:line:col: message` per issue, `path: ok …` per valid file. */
export function formatValidated(results: Validated[]): string {
  const lines: string[] = [];
  for (const r of results) {
    if (r.ok) lines.push(`${r.path}: ok (${r.name}, content hash ${r.contentHash})`);
    else for (const i of r.issues) lines.push(formatIssue(r.path, i));
  }
  return lines.join("\n");
}
