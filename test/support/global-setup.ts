import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * One temporary directory for the whole test run, removed when the run ends: test workers are
 * ended without an `exit` event, so folders each worker removed on exit were left behind.
 * Helpers create their folders under `BATON_TEST_TMP` (see `testTmp`).
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), "baton-test-run-"));
  process.env.BATON_TEST_TMP = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
