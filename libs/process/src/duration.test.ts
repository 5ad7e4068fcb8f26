/** Durations (specification §2.4): an integer followed by m, h or d. Nothing else. */

import { describe, expect, it } from "vitest";
import { durationProblem, MAX_DURATION_MS, parseDuration } from "./duration.ts";

describe("§2.4 durations", () => {
  it.each([
    ["30m", 1_800_000],
    ["4h", 14_400_000],
    ["3d", 259_200_000],
    ["1m", 60_000],
    ["0m", 0],
    ["0d", 0],
    ["05m", 300_000],
    ["36500d", 36_500 * 86_400_000],
    ["876000h", 876_000 * 3_600_000],
    ["52560000m", 52_560_000 * 60_000],
  ])("§2.4 %s is %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
    expect(durationProblem(text)).toBeNull();
  });

  it("§2.4 the bound is 100 years", () => {
    expect(MAX_DURATION_MS).toBe(3_153_600_000_000);
    expect(parseDuration("36501d")).toBeNull();
    expect(parseDuration("52560001m")).toBeNull();
    expect(parseDuration("9999999999999999999999d")).toBeNull();
    expect(durationProblem("36501d")).toBe("longer than 100 years (36500d); use a shorter duration");
  });

  it.each([
    "",
    "m",
    "3",
    "3w",
    "3s",
    "3 d",
    " 3d",
    "3d ",
    "-3d",
    "+3d",
    "1.5h",
    "3D",
    "3M",
    "1h30m",
    "P3D",
    "３d",
    "3d\n",
  ])("§2.4 %j is not a duration", (text) => {
    expect(parseDuration(text)).toBeNull();
    expect(durationProblem(text)).toBe("not a duration; use an integer followed by m, h or d (30m, 4h, 3d)");
  });

  it("§2.4 a non-string is not a duration", () => {
    expect(parseDuration(30 as unknown as string)).toBeNull();
    expect(durationProblem(30)).toBe("not a duration; use an integer followed by m, h or d (30m, 4h, 3d)");
  });
});
