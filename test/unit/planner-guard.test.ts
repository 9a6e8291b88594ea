import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

/** The repository's root from build/test/unit. */
const ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * The planner server's guard (infra/serving/planner_guard.py) without the server: its Python unit
 * tests (test/unit/planner_guard_test.py, standard library only) run by the system's python3. The
 * Host and Origin checks, the key before the body (counted by what the guard took of the body), the
 * caps on the body, `n` and images, where an image may come from (a stub lookup; a local server on
 * 127.0.0.1 as the S3 host) and the per-request seed. The same refusals from the real server:
 * test/training/planner-server-security.test.ts.
 */
describe("the planner server's guard, without the server (python3 unit tests)", () => {
  it('passes every check of test/unit/planner_guard_test.py', () => {
    const run = spawnSync('python3', ['-I', path.join(ROOT, 'test', 'unit', 'planner_guard_test.py'), '-v'], { encoding: 'utf8', timeout: 60_000 });
    const report = `${run.stdout}${run.stderr}`;
    assert.equal(run.status, 0, report);
    const ran = /Ran (\d+) tests/.exec(report);
    assert.ok(ran !== null && Number(ran[1]) >= 13, `all 13 tests ran: ${report}`);
    assert.ok(/\nOK\s*$/.test(report), report);
  });
});
