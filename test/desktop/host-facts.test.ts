import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { findTexFiles, probeLocalHost, resolveProgram } from '../../activities/desktop/local/host-facts';

describe('local host facts, probed on this machine (real kpsewhich, real PATH)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'coda-host-facts-'));
    writeFileSync(path.join(dir, 'fakeapp'), '#!/bin/sh\n');
    chmodSync(path.join(dir, 'fakeapp'), 0o755);
    writeFileSync(path.join(dir, 'notexec'), '');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the TeX files kpsewhich finds and leaves out the missing ones (it exits non-zero for them)', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: dir };
    assert.deepEqual(await findTexFiles(['article.cls', 'no-such-package-coda.sty', 'footmisc.sty', 'plain.bst', 'also-missing-coda.cls'], { env }), ['article.cls', 'footmisc.sty', 'plain.bst']);
    assert.deepEqual(await findTexFiles([], { env }), []);
    assert.deepEqual(await findTexFiles(['article.cls'], { env, kpsewhich: path.join(dir, 'no-kpsewhich') }), []);
  });

  it('resolves programs on PATH only when executable', () => {
    assert.equal(resolveProgram('fakeapp', `/nonexistent${path.delimiter}${dir}`), path.join(dir, 'fakeapp'));
    assert.equal(resolveProgram('notexec', dir), undefined);
    assert.equal(resolveProgram(path.join(dir, 'fakeapp'), ''), path.join(dir, 'fakeapp'));
  });

  it('lists an app only when its command resolves and a driver exists, and the programs and TeX files asked for that exist', async () => {
    const facts = await probeLocalHost(
      [
        { software: 'KAlgebra', launchMatch: '/app/bin/kalgebra', command: ['kalgebra'], env: {}, startTimeoutSeconds: 60, maxStepWaitSeconds: 10 },
        { software: 'TeXstudio', launchMatch: 'texstudio', command: ['texstudio'], env: {}, startTimeoutSeconds: 60, maxStepWaitSeconds: 10 },
        { software: 'Celestia', launchMatch: 'celestia', command: ['celestia-qt6'], env: {}, startTimeoutSeconds: 60, maxStepWaitSeconds: 10 },
        { software: 'Fake', launchMatch: 'fakeapp', command: [path.join(dir, 'fakeapp')], env: {}, startTimeoutSeconds: 60, maxStepWaitSeconds: 10 },
      ],
      { programs: ['pdflatex', 'bibtex', 'no-such-program-coda'], texFiles: ['beramono.sty', 'sidecap.sty'] },
      { drivers: ['KAlgebra', 'TeXstudio', 'Celestia'] },
    );
    // Celestia has a driver here but no binary; Fake has a binary but no driver.
    assert.deepEqual(facts, { apps: ['KAlgebra', 'TeXstudio'], programs: ['pdflatex', 'bibtex'], texFiles: ['sidecap.sty'] });
  });
});
