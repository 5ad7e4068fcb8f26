import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

/**
 * Debian's Chromium driven by playwright-core (issue #16), the way the console's end-to-end tests see
 * it: headless, no sandbox (tests run as root), nothing reaching the network on its own, and a fresh
 * profile each time. `scripts/ensure-services.sh` installs `chromium` where it is missing.
 */

export const CHROMIUM = process.env.BATON_CHROMIUM ?? "/usr/bin/chromium";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const require = createRequire(import.meta.url);
/** axe-core's script, injected into pages under test. */
export const AXE_SOURCE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/** A running browser with its own fresh profile directory; `close()` removes both. */
export interface TestBrowser {
  context: BrowserContext;
  /** A new tab (its own sessionStorage, so its own sign-in), light unless `scheme` says dark. */
  page(options?: { scheme?: "light" | "dark"; viewport?: { width: number; height: number } }): Promise<Page>;
  close(): Promise<void>;
}

/** Starts Chromium (see the module comment). */
export async function startBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(process.env.BATON_TEST_TMP ?? tmpdir(), "chromium-"));
  // A persistent context is how playwright passes a --user-data-dir of our choosing.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
    colorScheme: "light",
  });
  return {
    context,
    async page(options = {}) {
      const page = await context.newPage();
      await page.emulateMedia({ colorScheme: options.scheme ?? "light" });
      if (options.viewport) await page.setViewportSize(options.viewport);
      return page;
    },
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** An axe-core violation, as the tests report it. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Runs axe-core on the page as it is and returns every violation of impact `serious` or `critical`. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated, not added as a <script>: the console's Content-Security-Policy refuses inline scripts.
  if (!(await page.evaluate('"axe" in window'))) await page.evaluate(AXE_SOURCE);
  // A string, so this file needs no DOM types: it runs in the page.
  const violations = (await page.evaluate(`(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(" ")),
    }));
  })()`)) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}
