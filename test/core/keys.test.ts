import assert from 'node:assert/strict';
import {
  attemptOfManifest,
  attemptPrefix,
  decisionKey,
  judgeEvalKeyBase,
  judgeVoteKey,
  keySegment,
  manifestKey,
  reportKeyBase,
  safeRelative,
  screenshotKey,
  stackCheckKey,
  stampOf,
  taskKey,
  taskSetManifestKey,
  taskSetReplyKey,
  taskSetTaskKey,
  verdictKey,
} from '../../core/keys';

describe('storage keys', () => {
  const ref = { run: 'eval-2025-01', software: 'KAlgebra', task: 'A-01', attempt: 2 };

  it('lays out one attempt under one prefix, steps zero-padded', () => {
    assert.equal(attemptPrefix('coda', ref), 'coda/runs/eval-2025-01/KAlgebra/A-01/2');
    assert.equal(manifestKey('coda', ref), 'coda/runs/eval-2025-01/KAlgebra/A-01/2/manifest.json');
    assert.equal(screenshotKey('coda', ref, 0), 'coda/runs/eval-2025-01/KAlgebra/A-01/2/steps/0000/screenshot.png');
    assert.equal(decisionKey('coda', ref, 12, 3), 'coda/runs/eval-2025-01/KAlgebra/A-01/2/steps/0012/decision-3.json');
    assert.equal(taskKey('coda', 'KAlgebra', 'C-05'), 'coda/tasks/KAlgebra/C-05.json');
    assert.equal(stackCheckKey('', 'abc'), 'stack-checks/abc.json');
    assert.equal(attemptPrefix('', ref), 'runs/eval-2025-01/KAlgebra/A-01/2');
  });

  it('refuses segments that could escape their folder', () => {
    assert.equal(keySegment('A-01', 'task id'), 'A-01');
    for (const bad of ['', '../x', 'a/b', 'a..b', '.hidden', 'with space', 'x'.repeat(129)]) {
      assert.throws(() => keySegment(bad, 'task id'), /cannot be part of a storage key/, bad);
    }
    assert.throws(() => manifestKey('p', { ...ref, task: '../../etc' }), /task id/);
  });

  it('puts verdicts, votes, task sets and reports beside what they are about', () => {
    assert.equal(verdictKey('coda', ref), 'coda/runs/eval-2025-01/KAlgebra/A-01/2/verdict.json');
    assert.equal(verdictKey('coda', ref, 'voting4'), 'coda/runs/eval-2025-01/KAlgebra/A-01/2/verdicts/voting4.json');
    assert.equal(judgeVoteKey('coda', ref, 'default', 3), 'coda/runs/eval-2025-01/KAlgebra/A-01/2/judging/default/vote-3.json');
    assert.equal(taskSetManifestKey('coda', 'KAlgebra', 'v1'), 'coda/tasks/KAlgebra/sets/v1/manifest.json');
    assert.equal(taskSetTaskKey('coda', 'KAlgebra', 'v1', 'G-001'), 'coda/tasks/KAlgebra/sets/v1/G-001.json');
    assert.equal(taskSetReplyKey('', 'KAlgebra', 'v1', 2), 'tasks/KAlgebra/sets/v1/replies/reply-2.json');
    assert.equal(stampOf('2026-11-23T02:00:05.123Z'), '20261123T020005Z');
    assert.equal(reportKeyBase('coda', 'nightly', '20261123T020005Z', 'n1'), 'coda/reports/nightly/20261123T020005Z-n1');
    assert.equal(judgeEvalKeyBase('coda', 'je1'), 'coda/judge-evals/je1');
    assert.throws(() => verdictKey('coda', ref, '../x'), /verdict label/);
  });

  it('reads the attempt back from a manifest key, and refuses keys of any other shape', () => {
    assert.deepEqual(attemptOfManifest('coda', manifestKey('coda', ref)), ref);
    assert.deepEqual(attemptOfManifest('', manifestKey('', ref)), ref);
    for (const bad of ['coda/runs/r/K/A-01/x/manifest.json', 'coda/runs/r/K/A-01/0/verdict.json', 'other/runs/r/K/A-01/0/manifest.json', 'coda/runs/r/K/0/manifest.json', 'coda/runs/r/K/../0/manifest.json', 'coda/runs/r/K/A-01/01/manifest.json']) {
      assert.throws(() => attemptOfManifest('coda', bad), /is not a trajectory manifest key|cannot be part of a storage key/, bad);
    }
  });

  it('safeRelative refuses ., .. and empty segments (so absolute paths too), and keeps names that merely contain dots', () => {
    for (const bad of ['..', '../x', 'a/../../x', './x', 'a/./b', '/etc/x', 'a//b', 'a/', '']) {
      assert.throws(() => safeRelative(bad, 'the test'), new RegExp(`^ValidationError: the test is invalid:\\n  - path "${bad.replace(/\./g, '\\.')}" would leave its folder`), bad);
    }
    for (const good of ['x', 'a/b.c', '..x', 'a/...', 'a/.hidden', 'checkpoint-5/model.safetensors']) assert.equal(safeRelative(good, 'the test'), good);
  });
});
