import type { GuiAction, InputEvent } from '../actions';
import { keyNames } from './keys';

export { RenderError } from './keys';

const SCROLL_BUTTON = { up: 4, down: 5, left: 6, right: 7 } as const;

/**
 * A typed action as the input events a local X display performs (see activities/desktop/x11).
 * Terminal actions (done, fail, answer, call_user) touch nothing and render to no events.
 * Throws RenderError for a hotkey with a key the key table does not know.
 */
export function toInputEvents(action: GuiAction): InputEvent[] {
  switch (action.type) {
    case 'click':
      return [{ kind: 'move', x: action.x, y: action.y }, { kind: 'click', button: 1, count: 1 }];
    case 'double_click':
      return [{ kind: 'move', x: action.x, y: action.y }, { kind: 'click', button: 1, count: 2 }];
    case 'right_click':
      return [{ kind: 'move', x: action.x, y: action.y }, { kind: 'click', button: 3, count: 1 }];
    case 'hover':
      return [{ kind: 'move', x: action.x, y: action.y }];
    case 'drag':
      return [
        { kind: 'move', x: action.from.x, y: action.from.y },
        { kind: 'button_down', button: 1 },
        { kind: 'move', x: Math.round((action.from.x + action.to.x) / 2), y: Math.round((action.from.y + action.to.y) / 2) },
        { kind: 'move', x: action.to.x, y: action.to.y },
        { kind: 'button_up', button: 1 },
      ];
    case 'scroll': {
      const wheel: InputEvent = { kind: 'click', button: SCROLL_BUTTON[action.direction], count: action.amount };
      // Without a point the wheel turns where the pointer is.
      return action.x === undefined || action.y === undefined ? [wheel] : [{ kind: 'move', x: action.x, y: action.y }, wheel];
    }
    case 'type': {
      const events: InputEvent[] = action.text === '' ? [] : [{ kind: 'type', text: action.text }];
      return action.submit ? [...events, { kind: 'key', chord: 'Return' }] : events;
    }
    case 'hotkey': {
      // Keys that press nothing on a VM press nothing here; a chord of only those is no event.
      const keysyms = keyNames(action.keys, 'x11');
      return keysyms.length === 0 ? [] : [{ kind: 'key', chord: keysyms.join('+') }];
    }
    case 'wait':
      return [{ kind: 'sleep', ms: Math.round(action.seconds * 1000) }];
    case 'done':
    case 'fail':
    case 'answer':
    case 'call_user':
      return [];
  }
}
