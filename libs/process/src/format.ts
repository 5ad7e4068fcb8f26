import type { Issue } from "./types.ts";

/** An issue as compilers print it: `path:line:col: message` (`expense/PROCESS.md:7:5: name: …`). */
export function formatIssue(file: string, issue: Issue): string {
  return `${file}:${issue.line}:${issue.col}: ${issue.message}`;
}
