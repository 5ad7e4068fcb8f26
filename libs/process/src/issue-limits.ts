/**
 * Bounds on what a refusal carries ("Implementing a process server" Step 1: report every issue at
 * once). The spec is silent on size; a refusal travels in one bus message (NATS: 1 MB by default)
 * and is read by a person, so:
 * - a message is at most {@link MAX_MESSAGE} characters (longer ones are cut, ending in `…`);
 * - a result holds at most {@link MAX_ISSUES} issues, the first in document order, plus one last
 *   issue at the position of the first one left out, saying how many more there were.
 *
 * 201 issues of 500 UTF-16 code units are at most about 300 KB of UTF-8, so a refusal fits.
 */

import type { Issue } from "./types.ts";

/** The most issues a result lists before the closing "… and N more issues" issue. */
export const MAX_ISSUES = 200;
/** The most characters (UTF-16 code units) of one issue message. */
export const MAX_MESSAGE = 500;

/** `message` cut to {@link MAX_MESSAGE} characters, ending in `…`, never splitting a surrogate pair. */
export function clipMessage(message: string): string {
  if (message.length <= MAX_MESSAGE) return message;
  let end = MAX_MESSAGE - 1;
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${message.slice(0, end)}…`;
}

/** A count with thousands separators for messages: `59800` → `59,800`. */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * The issues to return, given every issue sorted by position: all of them when there are at most
 * {@link MAX_ISSUES}; otherwise the first {@link MAX_ISSUES} and one issue, at the position of the
 * first one left out, saying how many more there were. Messages are clipped either way.
 */
export function limitIssues(sorted: readonly Issue[]): Issue[] {
  const kept = sorted.slice(0, MAX_ISSUES).map((i) => ({ ...i, message: clipMessage(i.message) }));
  const rest = sorted.length - MAX_ISSUES;
  const first = sorted[MAX_ISSUES];
  if (rest > 0 && first !== undefined) {
    const more = rest === 1 ? "1 more issue" : `${formatCount(rest)} more issues`;
    kept.push({
      line: first.line,
      col: first.col,
      message: `frontmatter: … and ${more} from here on; fix these first`,
    });
  }
  return kept;
}
