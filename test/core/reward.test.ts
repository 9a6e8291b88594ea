import assert from 'node:assert/strict';
import type { GuiAction } from '../../core/actions';
import { actionReward, boxIoU, groupAdvantages, hotkeySimilarity, levenshtein, pointSimilarity, textSimilarity } from '../../core/reward';
import { Prng, randomAction } from '../support/prng';

const screen = { width: 1280, height: 800 };
const approx = (actual: number, expected: number): void => assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} != ${expected}`);

describe('GRPO reward', () => {
  it('gives 0 to a malformed output and to the wrong action type', () => {
    assert.equal(actionReward(null, { type: 'done' }, screen), 0);
    assert.equal(actionReward({ type: 'click', x: 1, y: 1 }, { type: 'double_click', x: 1, y: 1 }, screen), 0);
    assert.equal(actionReward({ type: 'done' }, { type: 'fail' }, screen), 0);
  });

  it('scores points by 1 minus the screen-normalised L1 distance', () => {
    assert.equal(actionReward({ type: 'click', x: 640, y: 400 }, { type: 'click', x: 640, y: 400 }, screen), 2);
    assert.equal(actionReward({ type: 'click', x: 0, y: 400 }, { type: 'click', x: 640, y: 400 }, screen), 1.75);
    assert.equal(actionReward({ type: 'right_click', x: 0, y: 0 }, { type: 'right_click', x: 1280, y: 800 }, screen), 1);
    assert.equal(actionReward({ type: 'hover', x: 0, y: 400 }, { type: 'hover', x: 640, y: 400 }, screen), 1.75);
    assert.equal(actionReward({ type: 'hover', x: 640, y: 400 }, { type: 'click', x: 640, y: 400 }, screen), 0, 'a hover is not a click');
    assert.equal(pointSimilarity({ x: 0, y: 0 }, { x: 5000, y: 0 }, screen), 0, 'floored at 0 off screen');
    approx(actionReward({ type: 'double_click', x: 100, y: 100 }, { type: 'double_click', x: 164, y: 140 }, screen), 1 + 1 - (64 / 1280 + 40 / 800) / 2);
  });

  it('scores drags by the IoU of the boxes they span, endpoints when a box is flat', () => {
    const drag = (x1: number, y1: number, x2: number, y2: number): GuiAction => ({ type: 'drag', from: { x: x1, y: y1 }, to: { x: x2, y: y2 } });
    approx(actionReward(drag(0, 0, 100, 100), drag(50, 50, 150, 150), screen), 1 + 2500 / 17500);
    assert.equal(actionReward(drag(100, 100, 0, 0), drag(0, 0, 100, 100), screen), 2, 'a box is a box whichever corner starts');
    assert.equal(actionReward(drag(0, 0, 10, 10), drag(20, 20, 30, 30), screen), 1);
    approx(actionReward(drag(0, 10, 100, 10), drag(0, 20, 100, 20), screen), 1 + (1 - 10 / 800 / 2));
    assert.equal(boxIoU({ left: 0, top: 0, right: 0, bottom: 0 }, { left: 0, top: 0, right: 0, bottom: 0 }), 0);
  });

  it('scores scrolls by direction only', () => {
    assert.equal(actionReward({ type: 'scroll', x: 1, y: 1, direction: 'down', amount: 5 }, { type: 'scroll', x: 900, y: 700, direction: 'down', amount: 2 }, screen), 2);
    assert.equal(actionReward({ type: 'scroll', x: 1, y: 1, direction: 'up', amount: 5 }, { type: 'scroll', x: 1, y: 1, direction: 'down', amount: 5 }, screen), 1);
  });

  it('scores text by normalised Levenshtein similarity, halved on a submit mismatch', () => {
    approx(actionReward({ type: 'type', text: 'kitten', submit: true }, { type: 'type', text: 'sitting', submit: true }, screen), 1 + (1 - 3 / 7));
    approx(actionReward({ type: 'type', text: 'kitten', submit: false }, { type: 'type', text: 'sitting', submit: true }, screen), 1 + (1 - 3 / 7) / 2);
    assert.equal(actionReward({ type: 'type', text: 'p := 2', submit: false }, { type: 'type', text: 'p := 2', submit: true }, screen), 1.5);
    assert.equal(actionReward({ type: 'answer', text: ' 46368\n' }, { type: 'answer', text: '46368' }, screen), 2);
    approx(actionReward({ type: 'answer', text: '46369' }, { type: 'answer', text: '46368' }, screen), 1.8);
    assert.equal(levenshtein('kitten', 'sitting'), 3);
    assert.equal(levenshtein('', 'abc'), 3);
    assert.equal(textSimilarity('😀a', '😀b'), 0.5, 'code points, not UTF-16 units');
    assert.equal(textSimilarity('', ''), 1);
  });

  it('scores hotkeys by the Jaccard similarity of their key sets, aliases merged', () => {
    assert.equal(actionReward({ type: 'hotkey', keys: ['control', 'C'] }, { type: 'hotkey', keys: ['c', 'ctrl'] }, screen), 2);
    approx(actionReward({ type: 'hotkey', keys: ['ctrl', 'c'] }, { type: 'hotkey', keys: ['ctrl', 'v'] }, screen), 1 + 1 / 3);
    approx(hotkeySimilarity(['ctrl', 'shift', 't'], ['ctrl', 't']), 2 / 3);
    assert.equal(hotkeySimilarity(['return'], ['enter']), 1);
    assert.equal(hotkeySimilarity(['hyper'], ['HYPER']), 1, 'unknown keys compare by lower-cased name');
  });

  it('gives parameterless actions full marks', () => {
    assert.equal(actionReward({ type: 'wait', seconds: 1 }, { type: 'wait', seconds: 5 }, screen), 2);
    for (const type of ['done', 'fail', 'call_user'] as const) assert.equal(actionReward({ type }, { type }, screen), 2);
  });

  describe('properties', () => {
    const rng = new Prng(7);
    const screens = [screen, { width: 1920, height: 1080 }, { width: 640, height: 480 }];

    it('scores identical actions 2', () => {
      for (let i = 0; i < 3000; i++) {
        const s = rng.pick(screens);
        const action = randomAction(rng, s);
        assert.equal(actionReward(structuredClone(action), action, s), 2, JSON.stringify(action));
      }
    });

    it('keeps every reward in [0, 2]', () => {
      let sameType = 0;
      for (let i = 0; i < 20_000; i++) {
        const s = rng.pick(screens);
        const a = randomAction(rng, s);
        const b = randomAction(rng, s);
        const r = actionReward(rng.chance(0.05) ? null : a, b, s);
        assert.ok(r >= 0 && r <= 2, `${r} for ${JSON.stringify([a, b])}`);
        if (a.type === b.type) {
          sameType += 1;
          assert.ok(r >= 1 || r === 0);
        }
      }
      assert.ok(sameType > 1000, `only ${sameType} same-type pairs`);
    });

    it('never scores a point further away higher', () => {
      for (let i = 0; i < 5000; i++) {
        const s = rng.pick(screens);
        const reference = { x: rng.int(0, s.width - 1), y: rng.int(0, s.height - 1) };
        const near = { x: rng.int(0, s.width - 1), y: rng.int(0, s.height - 1) };
        // Push the candidate away from the reference along each axis.
        const away = (value: number, ref: number, max: number): number =>
          Math.min(max, Math.max(0, value + Math.sign(value - ref || 1) * rng.int(0, 200)));
        const far = { x: away(near.x, reference.x, s.width - 1), y: away(near.y, reference.y, s.height - 1) };
        const type = rng.pick(['click', 'double_click', 'right_click'] as const);
        const rNear = actionReward({ type, ...near }, { type, ...reference }, s);
        const rFar = actionReward({ type, ...far }, { type, ...reference }, s);
        assert.ok(rFar <= rNear, `${JSON.stringify({ reference, near, far })}: ${rFar} > ${rNear}`);
      }
    });

    it('text similarity is symmetric and in [0, 1]', () => {
      for (let i = 0; i < 2000; i++) {
        const a = rng.string(rng.int(0, 12), 'abc😀 ');
        const b = rng.string(rng.int(0, 12), 'abc😀 ');
        const s = textSimilarity(a, b);
        assert.equal(s, textSimilarity(b, a));
        assert.ok(s >= 0 && s <= 1);
        assert.equal(textSimilarity(a, a), 1);
      }
    });
  });
});

describe('group advantages', () => {
  it('normalises by the group mean and sample standard deviation', () => {
    const rewards = [1, 2, 3, 4];
    const std = Math.sqrt((2.25 + 0.25 + 0.25 + 2.25) / 3);
    const advantages = groupAdvantages(rewards);
    advantages.forEach((a, i) => approx(a, ((rewards[i] as number) - 2.5) / (std + 1e-6)));
    approx(advantages.reduce((sum, a) => sum + a, 0), 0);
    approx(groupAdvantages([0, 2], 0)[1] as number, 1 / Math.SQRT2);
  });

  it('gives zeros to a group without signal', () => {
    assert.deepEqual(groupAdvantages([1.1, 1.1, 1.1, 1.1]), [0, 0, 0, 0]);
    assert.deepEqual(groupAdvantages([2]), [0]);
    assert.deepEqual(groupAdvantages([]), []);
  });

  it('refuses rewards that are not numbers', () => {
    assert.throws(() => groupAdvantages([1, Number.NaN]), RangeError);
  });
});
