import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeHomeFile } from '../../io/vm-commands';

/**
 * A local desktop's `touch` step (io/vm-commands.ts writeHomeFile, issue 44 item 7): links the
 * desktop's apps left in HOME are followed only where they stay in HOME. The place outside HOME is
 * a folder of the test's own, so even a write that got through would land there and nowhere else.
 */
describe("a local desktop's touch step: nothing written through a link leaving HOME", () => {
  let root: string;
  let home: string;
  let outside: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'coda-touch-'));
    home = path.join(root, 'home');
    outside = path.join(root, 'outside');
    mkdirSync(path.join(home, 'docs'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'kept.txt'), 'kept');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes in HOME, creating folders, and through a link that stays in HOME', () => {
    writeHomeFile('/home/user/a/b/script.kal', home, 'plot(x)');
    assert.equal(readFileSync(path.join(home, 'a/b/script.kal'), 'utf8'), 'plot(x)');
    symlinkSync(path.join(home, 'docs'), path.join(home, 'inner'));
    writeFileSync(path.join(home, 'docs/target.txt'), '');
    symlinkSync('docs/target.txt', path.join(home, 'docs-file'));
    writeHomeFile('~/inner/new/x.txt', home, 'x');
    writeHomeFile('~/docs-file', home, 'y');
    assert.deepEqual([readFileSync(path.join(home, 'docs/new/x.txt'), 'utf8'), readFileSync(path.join(home, 'docs/target.txt'), 'utf8')], ['x', 'y']);
  });

  it('refuses a folder on the way, or the file itself, that is a link out of HOME, or a link to nothing; nothing is created outside', () => {
    symlinkSync(outside, path.join(home, 'out'));
    symlinkSync(path.join(outside, 'kept.txt'), path.join(home, 'notes.txt'));
    symlinkSync(path.join(outside, 'new.txt'), path.join(home, 'dangling.txt'));
    symlinkSync('../../outside', path.join(home, 'docs', 'up'));
    symlinkSync(path.join(outside, 'gone'), path.join(home, 'gone'));
    const cases: Array<[string, RegExp]> = [
      ['/home/user/out/x.txt', /^refused to write "\/home\/user\/out\/x\.txt": .*\/home\/out is really .*\/outside, outside the desktop's HOME$/],
      ['~/out/deeper/x.txt', /out is really .*\/outside, outside the desktop's HOME$/],
      ['~/docs/up/x.txt', /docs\/up is really .*\/outside, outside the desktop's HOME$/],
      ['~/notes.txt', /notes\.txt is a link to .*\/outside\/kept\.txt, outside the desktop's HOME$/],
      ['~/dangling.txt', /dangling\.txt is a link to nothing$/],
      ['~/gone/x.txt', /gone is a link to nothing$/],
    ];
    for (const [vmPath, why] of cases) assert.throws(() => writeHomeFile(vmPath, home, 'written'), (err: Error) => why.test(err.message) || assert.fail(`${vmPath}: ${err.message}`));
    assert.deepEqual(readdirSync(outside), ['kept.txt']);
    assert.equal(readFileSync(path.join(outside, 'kept.txt'), 'utf8'), 'kept');
    assert.equal(existsSync(path.join(home, 'out', 'deeper')), false);
  });

  it("refuses a path outside the VM user's home, as before", () => {
    assert.throws(() => writeHomeFile('/etc/coda-test', home, 'x'), /"\/etc\/coda-test" is outside the VM user's home/);
    assert.throws(() => writeHomeFile('~/../outside/x', home, 'x'), /leaves the user's home/);
  });
});
