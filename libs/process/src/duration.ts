/**
 * Durations (specification §2.4): an integer followed by `m`, `h` or `d`. Nothing else.
 */

const DURATION = /^([0-9]+)([mhd])$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * The longest duration accepted: 100 years (36500d). The spec sets no bound; an unbounded integer
 * would overflow a timer (`now + duration` leaves the range of a JavaScript Date near 275 000 years,
 * and leaves exact integer arithmetic long before). A century keeps every timer exact and is longer
 * than any process a person would write.
 */
export const MAX_DURATION_MS = 36_500 * UNIT_MS.d;

/**
 * Parses a duration (§2.4) into milliseconds: `30m` → 1_800_000, `4h` → 14_400_000,
 * `3d` → 259_200_000. Returns `null` when `text` is not a duration or is longer than
 * {@link MAX_DURATION_MS}.
 *
 * `0m` is a duration (the grammar admits it; it means "at once"), and leading zeros are allowed
 * (`05m` is five minutes), since both are "an integer followed by m, h or d". No sign, no spaces,
 * no fractions, no other units, no upper-case units.
 */
export function parseDuration(text: string): number | null {
  if (typeof text !== "string") return null;
  const m = DURATION.exec(text);
  if (!m) return null;
  const digits = m[1] as string;
  const unit = m[2] as keyof typeof UNIT_MS;
  // Compare before multiplying: a long digit string would lose precision as a double.
  const trimmed = digits.replace(/^0+(?=[0-9])/, "");
  if (trimmed.length > 12) return null;
  const ms = Number(trimmed) * UNIT_MS[unit];
  return ms <= MAX_DURATION_MS ? ms : null;
}

/** Why `text` is not a duration, for messages: `null` when it is one. */
export function durationProblem(text: unknown): string | null {
  if (typeof text === "string" && DURATION.test(text)) {
    return parseDuration(text) === null ? "longer than 100 years (36500d); use a shorter duration" : null;
  }
  return "not a duration; use an integer followed by m, h or d (30m, 4h, 3d)";
}
