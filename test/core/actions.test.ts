import assert from 'node:assert/strict';
import { describeAction, guiActionSchema, MAX_TEXT_LENGTH, type GuiAction } from '../../core/actions';
import { isTerminal, stopReasonOf } from '../../core/episode';

describe('GUI actions', () => {
  it('accepts every action type', () => {
    const actions: GuiAction[] = [
      { type: 'click', x: 1, y: 2 },
      { type: 'double_click', x: 1, y: 2 },
      { type: 'right_click', x: 1, y: 2 },
      { type: 'hover', x: 1, y: 2 },
      { type: 'drag', from: { x: 1, y: 2 }, to: { x: 3, y: 4 } },
      { type: 'scroll', x: 1, y: 2, direction: 'down', amount: 5 },
      { type: 'type', text: 'p := 2', submit: true },
      { type: 'hotkey', keys: ['ctrl', 'c'] },
      { type: 'wait', seconds: 5 },
      { type: 'done' },
      { type: 'fail' },
      { type: 'answer', text: '46368' },
      { type: 'call_user' },
    ];
    for (const action of actions) assert.deepEqual(guiActionSchema.parse(action), action);
  });

  it('refuses negative or fractional coordinates, unknown fields and overlong text', () => {
    assert.equal(guiActionSchema.safeParse({ type: 'click', x: -1, y: 2 }).success, false);
    assert.equal(guiActionSchema.safeParse({ type: 'click', x: 1.5, y: 2 }).success, false);
    assert.equal(guiActionSchema.safeParse({ type: 'click', x: 1, y: 2, button: 'left' }).success, false);
    assert.equal(guiActionSchema.safeParse({ type: 'type', text: 'x'.repeat(MAX_TEXT_LENGTH + 1), submit: false }).success, false);
    assert.equal(guiActionSchema.safeParse({ type: 'hotkey', keys: [] }).success, false);
    assert.equal(guiActionSchema.safeParse({ type: 'teleport' }).success, false);
  });

  it('takes a scroll without a point (where the pointer is), never with half of one', () => {
    assert.deepEqual(guiActionSchema.parse({ type: 'scroll', direction: 'down', amount: 5 }), { type: 'scroll', direction: 'down', amount: 5 });
    assert.equal(guiActionSchema.safeParse({ type: 'scroll', x: 1, direction: 'down', amount: 5 }).success, false);
    assert.equal(guiActionSchema.safeParse({ type: 'scroll', y: 1, direction: 'down', amount: 5 }).success, false);
    assert.equal(describeAction({ type: 'scroll', direction: 'down', amount: 5 }), 'scroll down 5 at the pointer');
  });

  it('knows which actions end an episode and how', () => {
    assert.equal(isTerminal({ type: 'done' }), true);
    assert.equal(isTerminal({ type: 'answer', text: '1' }), true);
    assert.equal(isTerminal({ type: 'click', x: 0, y: 0 }), false);
    assert.equal(stopReasonOf({ type: 'done' }), 'DONE');
    assert.equal(stopReasonOf({ type: 'fail' }), 'FAIL');
    assert.equal(stopReasonOf({ type: 'answer', text: '1' }), 'ANS');
    assert.equal(stopReasonOf({ type: 'call_user' }), 'CALL_USER');
    assert.equal(stopReasonOf({ type: 'wait', seconds: 1 }), undefined);
  });

  it('describes actions in one line', () => {
    assert.equal(describeAction({ type: 'click', x: 640, y: 400 }), 'click at (640, 400)');
    assert.equal(describeAction({ type: 'double_click', x: 1, y: 2 }), 'double click at (1, 2)');
    assert.equal(describeAction({ type: 'right_click', x: 1, y: 2 }), 'right click at (1, 2)');
    assert.equal(describeAction({ type: 'hover', x: 1, y: 2 }), 'hover at (1, 2)');
    assert.equal(describeAction({ type: 'drag', from: { x: 1, y: 2 }, to: { x: 3, y: 4 } }), 'drag from (1, 2) to (3, 4)');
    assert.equal(describeAction({ type: 'scroll', x: 1, y: 2, direction: 'up', amount: 5 }), 'scroll up 5 at (1, 2)');
    assert.equal(describeAction({ type: 'type', text: 'p := "x"', submit: true }), 'type "p := \\"x\\"" then Enter');
    assert.equal(describeAction({ type: 'type', text: 'a', submit: false }), 'type "a"');
    assert.equal(describeAction({ type: 'hotkey', keys: ['ctrl', 'l'] }), 'press ctrl+l');
    assert.equal(describeAction({ type: 'wait', seconds: 5 }), 'wait 5 s');
    assert.equal(describeAction({ type: 'answer', text: '5' }), 'answer "5"');
    assert.equal(describeAction({ type: 'done' }), 'done');
    assert.equal(describeAction({ type: 'fail' }), 'fail');
    assert.equal(describeAction({ type: 'call_user' }), 'call the user');
  });
});
