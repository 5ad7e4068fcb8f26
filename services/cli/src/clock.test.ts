import { describe, expect, it } from "vitest";
import { advanceDuration } from "./clock.ts";

describe("baton clock advance <duration> (§2.4 durations)", () => {
  it("takes an integer followed by m, h or d, in ms", () => {
    expect(advanceDuration("30m")).toBe(30 * 60_000);
    expect(advanceDuration("4h")).toBe(4 * 3_600_000);
    expect(advanceDuration("3d")).toBe(3 * 86_400_000);
    expect(advanceDuration("0m")).toBe(0);
  });

  it("refuses everything else", () => {
    for (const bad of ["3w", "1.5h", "1d12h", "90", "-1d", "", " 3d", "3D"])
      expect(advanceDuration(bad), bad).toBeNull();
  });
});
