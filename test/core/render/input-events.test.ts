import assert from 'node:assert/strict';
import { RenderError, toInputEvents } from '../../../core/render/input-events';

describe('input events (local X displays)', () => {
  it('renders clicks as a move then button presses', () => {
    assert.deepEqual(toInputEvents({ type: 'click', x: 10, y: 20 }), [
      { kind: 'move', x: 10, y: 20 },
      { kind: 'click', button: 1, count: 1 },
    ]);
    assert.deepEqual(toInputEvents({ type: 'double_click', x: 1, y: 2 })[1], { kind: 'click', button: 1, count: 2 });
    assert.deepEqual(toInputEvents({ type: 'right_click', x: 1, y: 2 })[1], { kind: 'click', button: 3, count: 1 });
  });

  it('renders a hover as a move alone', () => {
    assert.deepEqual(toInputEvents({ type: 'hover', x: 10, y: 20 }), [{ kind: 'move', x: 10, y: 20 }]);
  });

  it('renders a drag with the button held through a midpoint', () => {
    assert.deepEqual(toInputEvents({ type: 'drag', from: { x: 0, y: 0 }, to: { x: 11, y: 21 } }), [
      { kind: 'move', x: 0, y: 0 },
      { kind: 'button_down', button: 1 },
      { kind: 'move', x: 6, y: 11 },
      { kind: 'move', x: 11, y: 21 },
      { kind: 'button_up', button: 1 },
    ]);
  });

  it('renders scrolls as wheel buttons', () => {
    const buttons = (['up', 'down', 'left', 'right'] as const).map(
      (direction) => toInputEvents({ type: 'scroll', x: 5, y: 6, direction, amount: 3 })[1],
    );
    assert.deepEqual(buttons, [4, 5, 6, 7].map((button) => ({ kind: 'click', button, count: 3 })));
  });

  it('turns the wheel where the pointer is for a scroll without a point, moving nothing', () => {
    assert.deepEqual(toInputEvents({ type: 'scroll', direction: 'down', amount: 5 }), [{ kind: 'click', button: 5, count: 5 }]);
    assert.deepEqual(toInputEvents({ type: 'scroll', direction: 'left', amount: 2 }), [{ kind: 'click', button: 6, count: 2 }]);
  });

  it('types text as data and presses Return to submit', () => {
    const text = "'); import os; os.system('x') $(touch /tmp/pwned)";
    assert.deepEqual(toInputEvents({ type: 'type', text, submit: true }), [
      { kind: 'type', text },
      { kind: 'key', chord: 'Return' },
    ]);
    assert.deepEqual(toInputEvents({ type: 'type', text: '', submit: true }), [{ kind: 'key', chord: 'Return' }]);
    assert.deepEqual(toInputEvents({ type: 'type', text: 'a', submit: false }), [{ kind: 'type', text: 'a' }]);
  });

  it('renders hotkeys as X keysym chords and refuses unknown keys', () => {
    assert.deepEqual(toInputEvents({ type: 'hotkey', keys: ['ctrl', 'shift', 'Tab'] }), [{ kind: 'key', chord: 'ctrl+shift+Tab' }]);
    assert.deepEqual(toInputEvents({ type: 'hotkey', keys: ['enter'] }), [{ kind: 'key', chord: 'Return' }]);
    assert.throws(() => toInputEvents({ type: 'hotkey', keys: ['ctrl', '$(reboot)'] }), RenderError);
  });

  it('waits, and does nothing for terminal actions', () => {
    assert.deepEqual(toInputEvents({ type: 'wait', seconds: 1.5 }), [{ kind: 'sleep', ms: 1500 }]);
    for (const action of [{ type: 'done' }, { type: 'fail' }, { type: 'answer', text: '1' }, { type: 'call_user' }] as const) {
      assert.deepEqual(toInputEvents(action), []);
    }
  });
});
