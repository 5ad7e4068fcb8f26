/**
 * Units and formats of time for tests that read and move a clock, with no dependency on how the
 * clock is moved (the conformance scenarios use them against any server; `clock.ts` re-exports them).
 */

/** One minute, hour and day in ms. */
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** RFC 3339 of epoch ms in UTC (`…Z`), as the server writes every time. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** RFC 3339 of epoch ms, with an offset other than Z when `offset` is given (e.g. `+05:30`). */
export function rfc3339(ms: number, offset?: string): string {
  if (!offset) return new Date(ms).toISOString();
  const sign = offset.startsWith("-") ? -1 : 1;
  const [h, m] = offset.slice(1).split(":").map(Number) as [number, number];
  const local = new Date(ms + sign * (h * HOUR + m * MINUTE)).toISOString().replace(/Z$/, "");
  return `${local}${offset}`;
}
