import assert from 'node:assert/strict';
import { agreement, belowPrecisionFloor, judgeCalibration, type CalibrationTrajectory } from '../../../core/judge/calibration';

const vote = (judge: string, resolution: 'low' | 'high', approved: boolean) => ({ judge, resolution, approved });

describe('judge calibration: precision and recall against the evaluators', () => {
  it('counts the confusion matrix and divides by what was approved and by what passed', () => {
    const items = [
      ...Array.from({ length: 3 }, () => ({ predicted: true, truth: true })),
      { predicted: true, truth: false },
      { predicted: false, truth: true },
      { predicted: false, truth: true },
      { predicted: false, truth: false },
    ];
    assert.deepEqual(agreement(items), {
      trajectories: 7,
      approved: 4,
      passed: 5,
      truePositives: 3,
      falsePositives: 1,
      falseNegatives: 2,
      trueNegatives: 1,
      precision: 0.75,
      recall: 0.6,
    });
  });

  it('gives null, not 0 or 1, where there is nothing to divide by', () => {
    const none = agreement([]);
    assert.equal(none.precision, null);
    assert.equal(none.recall, null);
    const rejectedAll = agreement([{ predicted: false, truth: true }, { predicted: false, truth: false }]);
    assert.equal(rejectedAll.precision, null, 'nothing approved: no precision');
    assert.equal(rejectedAll.recall, 0, 'one passed, none approved');
    const nothingPassed = agreement([{ predicted: true, truth: false }, { predicted: false, truth: false }]);
    assert.equal(nothingPassed.precision, 0);
    assert.equal(nothingPassed.recall, null, 'nothing passed: no recall');
  });

  it('measures each judge at each resolution on the trajectories it voted on, and the final verdict on all', () => {
    const trajectories: CalibrationTrajectory[] = [
      // passed, approved by every vote
      { passed: true, success: true, votes: [vote('a', 'low', true), vote('b', 'low', true), vote('a', 'high', true), vote('b', 'high', true)] },
      // failed, b's low vote fooled, a's high vote stopped it
      { passed: false, success: false, votes: [vote('a', 'low', true), vote('b', 'low', true), vote('a', 'high', false)] },
      // passed, a rejected it at low resolution: nobody else voted
      { passed: true, success: false, votes: [vote('a', 'low', false)] },
      // failed, every vote fooled
      { passed: false, success: true, votes: [vote('a', 'low', true), vote('b', 'low', true), vote('a', 'high', true), vote('b', 'high', true)] },
    ];
    const c = judgeCalibration(trajectories);
    assert.deepEqual(
      { trajectories: c.final.trajectories, approved: c.final.approved, tp: c.final.truePositives, precision: c.final.precision, recall: c.final.recall },
      { trajectories: 4, approved: 2, tp: 1, precision: 0.5, recall: 0.5 },
    );
    assert.deepEqual(
      c.votes.map((v) => [v.judge, v.resolution, v.trajectories, v.approved, v.precision, v.recall]),
      [
        ['a', 'low', 4, 3, 1 / 3, 0.5],
        ['b', 'low', 3, 3, 1 / 3, 1],
        ['a', 'high', 3, 2, 0.5, 1],
        ['b', 'high', 2, 2, 0.5, 1],
      ],
    );
  });

  it('a judge with several votes at one resolution approves only when all of them say success', () => {
    const c = judgeCalibration([{ passed: true, success: false, votes: [vote('a', 'high', true), vote('a', 'high', false)] }]);
    assert.deepEqual(c.votes.map((v) => [v.judge, v.resolution, v.approved, v.falseNegatives, v.precision, v.recall]), [['a', 'high', 0, 1, null, 0]]);
  });

  it('stops a round only on a measured precision below a floor above 0, naming the figures', () => {
    const final = agreement([{ predicted: true, truth: true }, { predicted: true, truth: false }, { predicted: true, truth: false }, { predicted: false, truth: false }]);
    const why = belowPrecisionFloor(final, 0.6);
    assert.ok(why !== undefined);
    assert.match(why, /precision on the real tasks is 0\.333, below the floor of 0\.6/);
    assert.match(why, /of 3 rollouts it approved, the evaluators passed 1 \(4 judged, 1 passed, 2 false positives\)/);
    assert.equal(belowPrecisionFloor(final, 1 / 3), undefined, 'at the floor is not below it');
    assert.equal(belowPrecisionFloor(final, 0), undefined, 'a floor of 0 disables the check');
    assert.equal(belowPrecisionFloor(agreement([{ predicted: false, truth: false }]), 0.6), undefined, 'no approval: no evidence against the judge');
  });
});
