import assert from 'node:assert/strict';
import { summarize } from '../../../bench/profile-top';

/**
 * bench/profile-top reads what `node --cpu-prof` writes: a tree of call frames and, per sample, the
 * node that was on top. A hand-made profile whose shares are known says it counts self and total
 * time as the DevTools do (a function recursing counted once per sample in its total).
 */
describe('profile-top', () => {
  const frame = (functionName: string, url: string, lineNumber: number) => ({ functionName, url, lineNumber });
  // (root) 1 → main 2 → { work 3 → work 4 (recursion), (garbage collector) 5 }
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', '', -1), children: [2, 6] },
      { id: 2, callFrame: frame('main', 'file:///repo/build/bench/x.js', 9), children: [3, 5] },
      { id: 3, callFrame: frame('work', '/repo/node_modules/lib/index.js', 41), children: [4] },
      { id: 4, callFrame: frame('work', '/repo/node_modules/lib/index.js', 41) },
      { id: 5, callFrame: frame('(garbage collector)', '', -1) },
      { id: 6, callFrame: frame('(idle)', '', -1) },
    ],
    samples: [4, 4, 3, 2, 5, 6, 6, 6, 6, 6],
    startTime: 0,
    endTime: 2_000_000,
  };

  it('counts self time where samples were taken and total time wherever the function is on the stack', () => {
    const summary = summarize(profile);
    assert.equal(summary.samples, 10);
    assert.equal(summary.seconds, 2);
    const work = summary.entries.find((e) => e.name === 'work')!;
    assert.deepEqual(work, { name: 'work', where: 'lib/index.js:42', selfShare: 0.3, totalShare: 0.3 });
    const main = summary.entries.find((e) => e.name === 'main')!;
    assert.deepEqual(main, { name: 'main', where: 'build/bench/x.js:10', selfShare: 0.1, totalShare: 0.5 });
    assert.equal(summary.entries[0]!.name, '(idle)');
    assert.equal(summary.entries[0]!.selfShare, 0.5);
  });

  it('sums self time per file with group "file"', () => {
    const byFile = summarize(profile, 'file').entries;
    assert.equal(byFile.find((e) => e.name === 'lib/index.js')!.selfShare, 0.3);
    assert.equal(byFile.find((e) => e.name === '(native)')!.selfShare, 0.6);
  });
});
