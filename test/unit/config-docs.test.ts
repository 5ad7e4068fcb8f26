import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { configReference } from "../../scripts/config-docs.ts";

it("docs/configuration.md is the generated reference of every service's environment (ARCHITECTURE Configuration)", () => {
  const checkedIn = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
  expect(checkedIn, "run pnpm config-docs and commit docs/configuration.md").toBe(configReference());
});
