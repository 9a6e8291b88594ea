import assert from 'node:assert/strict';
import type { GuiAction, Point } from '../../core/actions';
import {
  formatExecutorAction,
  formatExecutorOutput,
  MAX_EXECUTOR_REPLY_CHARS,
  parseExecutorOutput,
  SCROLL_AMOUNT,
  WAIT_SECONDS,
  type ExecutorParse,
  type ExecutorView,
} from '../../core/executor-parser';
import { RenderError } from '../../core/render/input-events';
import { smartResize } from '../../core/smart-resize';
import { Prng, randomAction } from '../support/prng';

const view: ExecutorView = { screen: { width: 1280, height: 800 } };
const parse = (action: string, thought = 'Do it.'): ExecutorParse => parseExecutorOutput(`Thought: ${thought}\nAction: ${action}`, view);
const actionOf = (text: string): GuiAction => {
  const result = parse(text);
  assert.ok(result.ok, `expected ${text} to parse: ${result.ok ? '' : result.reason}`);
  return result.action;
};
const reasonOf = (text: string, v: ExecutorView = view): string => {
  const result = parseExecutorOutput(text.startsWith('Thought') ? text : `Action: ${text}`, v);
  assert.ok(!result.ok, `expected ${text} to fail`);
  return result.reason;
};

describe('executor output (UI-TARS-1.5)', () => {
  it('reads the thought and a click, mapping model pixels to the screen', () => {
    assert.deepEqual(parseExecutorOutput("Thought: Click the OK button.\nAction: click(start_box='(644,406)')", view), {
      ok: true,
      thought: 'Click the OK button.',
      action: { type: 'click', x: 640, y: 400 },
    });
    assert.deepEqual(parseExecutorOutput("Action: click(start_box='(644,406)')", view), { ok: true, thought: '', action: { type: 'click', x: 640, y: 400 } });
  });

  it('reads every way UI-TARS writes a point', () => {
    const expected = { type: 'click', x: 640, y: 400 };
    for (const point of [
      "start_box='(644,406)'",
      "start_box='(644, 406)'",
      "start_box='[644, 406]'",
      "start_box='<|box_start|>(644,406)<|box_end|>'",
      "start_box='(634,396,654,416)'",
      "start_box='<bbox>634 396 654 416</bbox>'",
      "point='<point>644 406</point>'",
      "start_point='<point>644 406</point>'",
      'start_box="(644.4,405.6)"',
    ]) {
      assert.deepEqual(actionOf(`click(${point})`), expected, point);
    }
  });

  it('reads every call of the action space', () => {
    assert.deepEqual(actionOf("left_single(start_box='(0,0)')"), { type: 'click', x: 0, y: 0 });
    assert.deepEqual(actionOf("left_double(start_box='(644,406)')"), { type: 'double_click', x: 640, y: 400 });
    assert.deepEqual(actionOf("right_single(start_box='(644,406)')"), { type: 'right_click', x: 640, y: 400 });
    assert.deepEqual(actionOf("hover(start_box='(644,406)')"), { type: 'hover', x: 640, y: 400 });
    assert.deepEqual(actionOf("select(start_box='(0,0)', end_box='(644,406)')"), { type: 'drag', from: { x: 0, y: 0 }, to: { x: 640, y: 400 } });
    assert.deepEqual(actionOf("drag(start_box='(0,0)', end_box='(1288,812)')"), { type: 'drag', from: { x: 0, y: 0 }, to: { x: 1279, y: 799 } });
    assert.deepEqual(actionOf("drag(start_point='<point>644 0</point>', end_point='<point>644 406</point>')"), {
      type: 'drag',
      from: { x: 640, y: 0 },
      to: { x: 640, y: 400 },
    });
    assert.deepEqual(actionOf("hotkey(key='ctrl c')"), { type: 'hotkey', keys: ['ctrl', 'c'] });
    assert.deepEqual(actionOf("type(content='p := 2')"), { type: 'type', text: 'p := 2', submit: false });
    assert.deepEqual(actionOf("scroll(start_box='(644,406)', direction='down')"), { type: 'scroll', x: 640, y: 400, direction: 'down', amount: SCROLL_AMOUNT });
    assert.deepEqual(actionOf('wait()'), { type: 'wait', seconds: WAIT_SECONDS });
    assert.deepEqual(actionOf('finished()'), { type: 'done' });
    assert.deepEqual(actionOf("finished(content='The variable p is set.')"), { type: 'done' });
    assert.deepEqual(actionOf('call_user()'), { type: 'call_user' });
  });

  it('scrolls where the pointer is when no point is given (no point in the action, as UI-TARS scrolls), in any case of direction', () => {
    assert.deepEqual(actionOf("scroll(direction='UP')"), { type: 'scroll', direction: 'up', amount: 5 });
    assert.equal(formatExecutorAction({ type: 'scroll', direction: 'down', amount: 5 }, view), "scroll(direction='down')");
    assert.match(reasonOf("scroll(start_box='(1,1)', direction='down or up')"), /direction must be one of up, down, left, right/);
    assert.match(reasonOf("scroll(start_box='(1,1)')"), /direction must be one of/);
  });

  it('reads keys split by spaces or plus signs, press and keydown as one-key hotkeys', () => {
    assert.deepEqual(actionOf("hotkey(key='Ctrl+Shift+T')"), { type: 'hotkey', keys: ['ctrl', 'shift', 't'] });
    assert.deepEqual(actionOf("hotkey(key='ctrl +')"), { type: 'hotkey', keys: ['ctrl', '+'] });
    assert.deepEqual(actionOf("hotkey(key='ctrl++')"), { type: 'hotkey', keys: ['ctrl', '+'] });
    assert.deepEqual(actionOf("press(key='enter')"), { type: 'hotkey', keys: ['enter'] });
    assert.deepEqual(actionOf("keydown(key='Tab')"), { type: 'hotkey', keys: ['tab'] });
    assert.match(reasonOf("hotkey(key='ctrl hyper')"), /unknown key "hyper"/);
    assert.match(reasonOf("hotkey(key='f25')"), /unknown key "f25"/);
    assert.match(reasonOf("hotkey(key='  ')"), /empty key/);
    assert.match(reasonOf('hotkey()'), /hotkey\(\.\.\.\) needs key/);
  });

  it('reads every key name pyautogui knows (those it presses nothing for on X too) and the X names of the left and right modifiers', () => {
    assert.deepEqual(actionOf("hotkey(key='ctrl_l c')"), { type: 'hotkey', keys: ['ctrl_l', 'c'] });
    assert.deepEqual(actionOf("hotkey(key='Shift_R Tab')"), { type: 'hotkey', keys: ['shift_r', 'tab'] });
    assert.deepEqual(actionOf("hotkey(key='ctrl pgdn')"), { type: 'hotkey', keys: ['ctrl', 'pgdn'] });
    assert.deepEqual(actionOf("press(key='F13')"), { type: 'hotkey', keys: ['f13'] });
    assert.deepEqual(actionOf("hotkey(key='alt prtsc')"), { type: 'hotkey', keys: ['alt', 'prtsc'] });
    assert.deepEqual(actionOf("keydown(key='numlock')"), { type: 'hotkey', keys: ['numlock'] });
    assert.deepEqual(actionOf("press(key='volumeup')"), { type: 'hotkey', keys: ['volumeup'] });
    assert.deepEqual(actionOf("hotkey(key='shift num5')"), { type: 'hotkey', keys: ['shift', 'num5'] });
    assert.deepEqual(actionOf("hotkey(key='ctrl ~')"), { type: 'hotkey', keys: ['ctrl', '~'] });
    assert.deepEqual(actionOf("press(key='accept')"), { type: 'hotkey', keys: ['accept'] });
    assert.equal(formatExecutorAction({ type: 'hotkey', keys: ['accept'] }, view), "hotkey(key='accept')");
  });

  it('decodes typed text: escapes, raw newlines, unescaped quotes; a trailing newline or backslash-n submits', () => {
    assert.deepEqual(actionOf("type(content='p := 2\\n')"), { type: 'type', text: 'p := 2', submit: true });
    assert.deepEqual(actionOf("type(content='say \\\"hi\\\", it\\'s a \\\\ here')"), { type: 'type', text: 'say "hi", it\'s a \\ here', submit: false });
    assert.deepEqual(actionOf("type(content='line 1\\nline 2')"), { type: 'type', text: 'line 1\nline 2', submit: false });
    assert.deepEqual(actionOf("type(content='raw\nnewline\n')"), { type: 'type', text: 'raw\nnewline', submit: true });
    assert.deepEqual(actionOf("type(content='a\\n\\n')"), { type: 'type', text: 'a\n', submit: true });
    // A literal backslash-n at the end (written \\n) submits too, as UI-TARS's own conversion has it, and takes only those two characters.
    assert.deepEqual(actionOf("type(content='p := 2\\\\n')"), { type: 'type', text: 'p := 2', submit: true });
    assert.deepEqual(actionOf("type(content='plan\\\\n')"), { type: 'type', text: 'plan', submit: true });
    assert.deepEqual(actionOf("type(content='C:\\\\\\\\n')"), { type: 'type', text: 'C:\\', submit: true });
    assert.deepEqual(actionOf("type(content='a\\\\nb')"), { type: 'type', text: 'a\\nb', submit: false });
    assert.deepEqual(actionOf("type(content='it's')"), { type: 'type', text: "it's", submit: false });
    assert.deepEqual(actionOf("type(content='f('x') = 1')"), { type: 'type', text: "f('x') = 1", submit: false });
    assert.deepEqual(actionOf('type(content="double \'quoted\'")'), { type: 'type', text: "double 'quoted'", submit: false });
    assert.deepEqual(actionOf("type(content='')"), { type: 'type', text: '', submit: false });
    assert.deepEqual(actionOf("type(content='√3 ✓')"), { type: 'type', text: '√3 ✓', submit: false });
    assert.deepEqual(actionOf("type(content='\\a\\b\\f\\v')"), { type: 'type', text: '\x07\b\f\v', submit: false });
    assert.deepEqual(actionOf("type(content='\\101\\102 \\7')"), { type: 'type', text: 'AB \x07', submit: false });
    assert.deepEqual(actionOf("type(content='path\\/to')"), { type: 'type', text: 'path\\/to', submit: false });
    assert.deepEqual(actionOf("type(content='\\N{GREEK SMALL LETTER PI} r\\N{SUPERSCRIPT TWO}\\n')"), { type: 'type', text: 'π r²', submit: true });
  });

  it('reads a call whose final parenthesis is missing, as the UI-TARS parser does', () => {
    assert.deepEqual(actionOf("click(start_box='(644,406)'"), { type: 'click', x: 640, y: 400 });
    assert.deepEqual(actionOf("hotkey(key='ctrl c'\n"), { type: 'hotkey', keys: ['ctrl', 'c'] });
    assert.deepEqual(actionOf("drag(start_box='(0,0)', end_box='(644,406)',"), { type: 'drag', from: { x: 0, y: 0 }, to: { x: 640, y: 400 } });
    assert.deepEqual(actionOf('wait('), { type: 'wait', seconds: WAIT_SECONDS });
    assert.deepEqual(actionOf("type(content='p := 2\\n'"), { type: 'type', text: 'p := 2', submit: true });
    assert.deepEqual(actionOf("type(content='it's'"), { type: 'type', text: "it's", submit: false });
    assert.match(reasonOf("click(start_box='(1,1)"), /the string for start_box in click\(\.\.\.\) is not closed/);
  });

  it('refuses a reply of several actions as malformed, naming its calls, rather than performing one and dropping the others', () => {
    const several = (names: string) => ({ ok: false, reason: `several actions in one reply (${names}): a step performs one action, so none is taken`, thought: 'Do it.' });
    assert.deepEqual(parse("click(start_box='(644,406)')\n\ntype(content='p := 2\\n')"), several('click, type'));
    assert.deepEqual(parse("type(content='it's')\n\nhotkey(key='enter')\nclick(start_box='(1,1)'"), several('type, hotkey, click'));
    assert.deepEqual(parse("wait()\n\nclick(start_box='(1,1)' oops) trailing\n\nfinished()"), several('wait, click'));
    assert.deepEqual(parse("finished()\n\nhover(start_box='(1,1)')"), several('finished, hover'));
    assert.deepEqual(parse(`wait()\n${'wait()\n'.repeat(9)}`), several('wait, wait, wait, wait, wait, wait, ...'));
  });

  it("refuses UI-TARS's mobile actions, saying they are mobile actions", () => {
    for (const call of ["open_app(app_name='KAlgebra')", "long_press(start_box='(644,406)')", 'press_home()', 'press_back()']) {
      const name = call.slice(0, call.indexOf('('));
      assert.deepEqual(parse(call), { ok: false, reason: `${name}(...) is a mobile action of UI-TARS: a desktop has no such action, and its prompt offers none`, thought: 'Do it.' }, call);
    }
  });

  it('honours a model image of another size', () => {
    const other: ExecutorView = { screen: { width: 1920, height: 1080 }, modelImage: { width: 1000, height: 1000 } };
    assert.deepEqual(parseExecutorOutput("Action: click(start_box='(500,500)')", other), { ok: true, thought: '', action: { type: 'click', x: 960, y: 540 } });
    const defaulted = parseExecutorOutput("Action: click(start_box='(1932,1092)')", { screen: { width: 1920, height: 1080 } });
    assert.deepEqual(defaulted, { ok: true, thought: '', action: { type: 'click', x: 1919, y: 1079 } });
  });

  it('clamps coordinates outside the image onto the screen', () => {
    assert.deepEqual(actionOf("click(start_box='(-20,99999999)')"), { type: 'click', x: 0, y: 799 });
  });

  it('accepts a reply wrapped in a fence and an Action on the same line as the thought', () => {
    const fenced = parseExecutorOutput("```\nThought: go\nAction: click(start_box='(644,406)')\n```", view);
    assert.deepEqual(fenced, { ok: true, thought: 'go', action: { type: 'click', x: 640, y: 400 } });
    const inline = parseExecutorOutput("Thought: go Action: wait()", view);
    assert.deepEqual(inline, { ok: true, thought: 'go', action: { type: 'wait', seconds: 5 } });
  });

  it('fails with a reason, and keeps the thought, for malformed output', () => {
    const cases: Array<[string, RegExp]> = [
      ['Thought: only thinking', /no "Action:"/],
      ['Action: ', /expected a call/],
      ['Action: 42', /expected a call/],
      ['Action: click', /expected "\(" after click/],
      ["Action: left_triple(start_box='(1,1)')", /unknown action left_triple/],
      ["Action: click(start_box='(1,1)', button='left')", /unknown argument button in click/],
      ['Action: click()', /click\(\.\.\.\) needs start_box/],
      ["Action: click('(1,1)')", /expected an argument name/],
      ["Action: click(start_box '(1,1)')", /has no "="/],
      ['Action: click(start_box=)', /has no value/],
      ["Action: click(start_box='(1,1)", /is not closed/],
      ["Action: click(start_box='(1,1)', start_box='(2,2)')", /given twice/],
      ["Action: click(start_box='(1,1)', point='<point>1 1</point>')", /start_box and point both name the same point/],
      ["Action: click(start_box='(1,1)' point='x')", /expected "," or "\)"/],
      ["Action: click(start_box='(1,1)') and then some", /unexpected text after click/],
      ["Action: click(start_box='(1,2,3)')", /expected a point/],
      ["Action: click(start_box='(a,b)')", /expected a point/],
      ['Action: click(start_box=\'(NaN,1)\')', /expected a point/],
      [`Action: click(start_box='(${'9'.repeat(400)},1)')`, /not finite/],
      ['Action: type()', /type\(\.\.\.\) needs content/],
      ["Action: drag(start_box='(1,1)')", /drag\(\.\.\.\) needs end_box/],
      [`Action: type(content='${'x'.repeat(10_001)}')`, /type\(\.\.\.\) is out of range/],
    ];
    for (const [text, reason] of cases) assert.match(reasonOf(text), reason, text);
    assert.deepEqual(parseExecutorOutput('Thought: I will click.\nAction: click()', view), {
      ok: false,
      reason: 'click(...) needs start_box',
      thought: 'I will click.',
    });
  });

  it("refuses Object.prototype's names as unknown actions, with or without arguments (a malformed reply, never call_user or a TypeError)", () => {
    for (const call of ['constructor()', 'toString()', 'valueOf()', 'hasOwnProperty()', "constructor(start_box='(1,1)')", '__proto__(x=1)', "__defineGetter__(key='a')"]) {
      const name = call.slice(0, call.indexOf('('));
      assert.deepEqual(parse(call), { ok: false, reason: `unknown action ${name}(...)`, thought: 'Do it.' }, call);
    }
  });

  it('reads points and calls padded with long runs of blanks (trimmed, not matched by a pattern), and refuses a reply longer than its cap unread', () => {
    const blanks = ' '.repeat(15_000);
    assert.deepEqual(actionOf(`click(start_box='(644,${blanks}406${blanks})')`), { type: 'click', x: 640, y: 400 });
    assert.deepEqual(actionOf(`type(content='it's')${'\n'.repeat(30_000)}`), { type: 'type', text: "it's", submit: false });
    const reply = "Thought: Wait.\nAction: wait()";
    assert.equal(parseExecutorOutput(reply.padEnd(MAX_EXECUTOR_REPLY_CHARS, ' '), view).ok, true);
    assert.deepEqual(parseExecutorOutput(reply.padEnd(MAX_EXECUTOR_REPLY_CHARS + 1, ' '), view), {
      ok: false,
      reason: `the executor reply is ${MAX_EXECUTOR_REPLY_CHARS + 1} characters long; at most ${MAX_EXECUTOR_REPLY_CHARS} are read`,
    });
  });

  it('writes actions back in exact UI-TARS-1.5 syntax', () => {
    assert.equal(formatExecutorAction({ type: 'click', x: 640, y: 400 }, view), "click(start_box='(644,406)')");
    assert.equal(formatExecutorAction({ type: 'double_click', x: 640, y: 400 }, view), "left_double(start_box='(644,406)')");
    assert.equal(formatExecutorAction({ type: 'right_click', x: 0, y: 0 }, view), "right_single(start_box='(0,0)')");
    assert.equal(formatExecutorAction({ type: 'hover', x: 640, y: 400 }, view), "hover(start_box='(644,406)')");
    assert.equal(formatExecutorAction({ type: 'drag', from: { x: 0, y: 0 }, to: { x: 640, y: 400 } }, view), "drag(start_box='(0,0)', end_box='(644,406)')");
    assert.equal(formatExecutorAction({ type: 'scroll', x: 640, y: 400, direction: 'left', amount: 3 }, view), "scroll(start_box='(644,406)', direction='left')");
    assert.equal(formatExecutorAction({ type: 'type', text: "it's a \\ \"q\"\nx", submit: true }, view), "type(content='it\\'s a \\\\ \"q\"\\nx\\n')");
    assert.equal(formatExecutorAction({ type: 'hotkey', keys: ['Ctrl', 'shift', "'"] }, view), "hotkey(key='ctrl shift \\'')");
    assert.equal(formatExecutorAction({ type: 'wait', seconds: 2 }, view), 'wait()');
    assert.equal(formatExecutorAction({ type: 'done' }, view), 'finished()');
    assert.equal(formatExecutorAction({ type: 'call_user' }, view), 'call_user()');
    assert.equal(formatExecutorOutput('Open the menu.', { type: 'click', x: 640, y: 400 }, view), "Thought: Open the menu.\nAction: click(start_box='(644,406)')");
  });

  it('refuses to write what UI-TARS cannot say', () => {
    assert.throws(() => formatExecutorAction({ type: 'fail' }, view), RenderError);
    assert.throws(() => formatExecutorAction({ type: 'answer', text: '5' }, view), /planner primitive/);
    assert.throws(() => formatExecutorAction({ type: 'hotkey', keys: ['ctrl', 'c d'] }, view), /unknown key/);
    assert.throws(() => formatExecutorAction({ type: 'hotkey', keys: ['hyper'] }, view), RenderError);
  });

  it('round-trips format then parse to the same action, up to rounding, on any screen', () => {
    const rng = new Prng(20250829);
    const screens = [
      { width: 1280, height: 800 },
      { width: 1920, height: 1080 },
      { width: 5120, height: 2880 },
      { width: 800, height: 600 },
      { width: 333, height: 777 },
    ];
    let checked = 0;
    for (let i = 0; i < 3000; i++) {
      const screen = rng.pick(screens);
      const v = { screen };
      const action = randomAction(rng, screen);
      if (action.type === 'fail' || action.type === 'answer') continue;
      const result = parseExecutorOutput(formatExecutorOutput('t', action, v), v);
      assert.ok(result.ok, `${JSON.stringify(action)}: ${result.ok ? '' : result.reason}`);
      const model = smartResize(screen.width, screen.height);
      const tolerance = Math.ceil(Math.max(screen.width / model.width, screen.height / model.height));
      assert.ok(near(result.action, action, tolerance), `${JSON.stringify(action)} came back as ${JSON.stringify(result.action)}`);
      checked += 1;
    }
    assert.ok(checked > 2000);
  });
});

const close = (a: Point, b: Point, tolerance: number): boolean => Math.abs(a.x - b.x) <= tolerance && Math.abs(a.y - b.y) <= tolerance;

/** Equal up to coordinate rounding, with what the syntax cannot carry (scroll amount, wait time) at its default. */
function near(got: GuiAction, want: GuiAction, tolerance: number): boolean {
  switch (want.type) {
    case 'click':
    case 'double_click':
    case 'right_click':
    case 'hover':
      return got.type === want.type && close(got, want, tolerance);
    case 'drag':
      return got.type === 'drag' && close(got.from, want.from, tolerance) && close(got.to, want.to, tolerance);
    case 'scroll':
      return got.type === 'scroll' && got.x !== undefined && close(got as Point, want as Point, tolerance) && got.direction === want.direction && got.amount === SCROLL_AMOUNT;
    case 'hotkey':
      return got.type === 'hotkey' && JSON.stringify(got.keys) === JSON.stringify(want.keys.map((key) => key.toLowerCase()));
    case 'wait':
      return got.type === 'wait' && got.seconds === WAIT_SECONDS;
    case 'type':
      // A trailing newline and a submit are the same keystroke, and the syntax writes both as \n.
      return got.type === 'type' && got.text + (got.submit ? '\n' : '') === want.text + (want.submit ? '\n' : '');
    default:
      return JSON.stringify(got) === JSON.stringify(want);
  }
}
