import assert from 'node:assert/strict';
import { guiActionSchema, type GuiAction } from '../../core/actions';
import { formatExecutorOutput, parseExecutorOutput, type ExecutorView } from '../../core/executor-parser';
import { parseJudgeReply } from '../../core/judge/reply';
import { judgeReplySchema } from '../../core/judge/verdict';
import { formatPlannerOutput, parsePlannerOutput } from '../../core/planner-parser';
import { MAX_INSTRUCTION_LENGTH, readTaskGeneratorReply } from '../../core/prompts/task-generator';
import { Prng, randomAction } from '../support/prng';

const INPUTS = 12_000;

const VIEWS: ExecutorView[] = [
  { screen: { width: 1280, height: 800 } },
  { screen: { width: 1920, height: 1080 } },
  { screen: { width: 640, height: 480 }, modelImage: { width: 1000, height: 1000 } },
  { screen: { width: 1, height: 1 } },
];

/** Hand-written outputs in the many spellings real models produce. */
const EXECUTOR_SEEDS = [
  "Thought: Click the OK button.\nAction: click(start_box='(644,406)')",
  "Action: left_double(start_box='<|box_start|>(10,20)<|box_end|>')",
  "Thought: drag\nAction: drag(start_point='<point>1 2</point>', end_point='<point>300 400</point>')",
  "Thought: type\nAction: type(content='p := conjugate(1+i)\\n')",
  "Action: type(content='it's \"quoted\" \\\\ \\n')",
  "Action: scroll(start_box='(1,2,30,40)', direction='down')",
  "Action: hotkey(key='ctrl shift t')",
  'Action: wait()',
  "Action: finished(content='done')",
  'Action: call_user()',
  "```\nThought: x\nAction: press(key='enter')\n```",
  // What UI-TARS's own parser accepts too (issue 10): hover, select, Python escapes, a trailing \\n, pyautogui's key names,
  // a missing final parenthesis, several actions.
  "Thought: show the tooltip\nAction: hover(start_box='(644,406)')",
  "Action: select(start_point='<point>1 2</point>', end_point='<point>300 400</point>')",
  "Action: type(content='\\a\\b\\f\\v \\101\\7 \\N{GREEK SMALL LETTER PI}\\N{degree sign} path\\/to \\N{NOT A NAME} \\N{ p := 2\\\\n')",
  "Action: hotkey(key='ctrl pgdn f13 prtsc numlock volumeup')",
  "Action: press(key='accept')",
  "Thought: x\nAction: click(start_box='(644,406)'",
  "Action: click(start_box='(1,1)')\n\ntype(content='it's')\nhotkey(key='enter'",
  "Action: type(content='it's \\N{BOM}'\n\nfinished()\n\nclick(start_box='(5,5)' oops",
];
const PLANNER_SEEDS = [
  'Thought: Click the input field.\nAction: click the input field at the bottom',
  'Thought: The answer is shown.\nAction: ```ANS 46368```',
  'Thought: Done.\nAction: DONE',
  'Thought: Impossible.\nAction: `FAIL`',
  'Thought: p is 1+-i ```ANS 1+-i```',
];
const JUDGE_SEEDS = [
  '```json\n{"Thoughts": "ok", "Correctness": true, "Redundant": [], "First_Error_Step": null}\n```',
  "{'Correctness': False, 'Redundant': [2, 3,], 'First_Error_Step': 4}",
  '**Correctness**: True\n- Redundant: [1]\nFirst_Error_Step: None',
  '{"tasks": [{"instruction": "Store 2^10 in q."}, "Plot sin(x)."]}',
];

const WEIRD = [
  '\u0000', '\u0007', '\u001b', '\u007f', '\u2028', '\u2029', '\ufeff', '\ud800', '\udfff', '\u0301', '\u202e', '😀', '√', 'π', '中', 'é',
  "'", '"', '\\', '(', ')', '[', ']', '{', '}', ',', '=', '<', '>', '|', ':', '`', '\n', '\t', ' ',
  'Action:', 'Thought:', 'ANS', 'DONE', 'FAIL', 'True', 'None', '<point>', '</point>', '<|box_start|>', '<|box_end|>',
  '-1', 'NaN', 'Infinity', '-Infinity', '1e308', '9'.repeat(400), '-99999999', '0.5', '.5', '1.', 'start_box=', "content='",
  '\\N{', '\\N{BOM}', '\\777', '\\a', '\\/', ')\n\n', "')\nhover(start_box='(1,1)'",
];

function mutate(rng: Prng, text: string): string {
  let out = text;
  for (let n = rng.int(1, 6); n > 0; n--) {
    const at = rng.int(0, out.length);
    switch (rng.int(0, 5)) {
      case 0:
        out = out.slice(0, at) + rng.pick(WEIRD) + out.slice(at);
        break;
      case 1:
        out = out.slice(0, at) + out.slice(at + rng.int(1, 5));
        break;
      case 2:
        out = out.slice(0, at) + rng.pick(WEIRD) + out.slice(at + 1);
        break;
      case 3:
        out = out.slice(0, at);
        break;
      case 4: {
        const end = Math.min(out.length, at + rng.int(1, 40));
        out = out.slice(0, end) + out.slice(at, end) + out.slice(end);
        break;
      }
      default:
        out = out.replace(/\d+/, rng.pick(['-5', 'NaN', '1e999', '9'.repeat(300), '0', '-0.0', '12.5']));
    }
  }
  return out;
}

function randomText(rng: Prng): string {
  switch (rng.int(0, 3)) {
    case 0:
      return rng.string(rng.int(0, 200), ' abcxyzABC0123456789()[]{}\'"\\,=:<>|`\n\t_-+.');
    case 1:
      return Array.from({ length: rng.int(0, 40) }, () => rng.pick(WEIRD)).join('');
    case 2:
      return String.fromCharCode(...Array.from({ length: rng.int(0, 100) }, () => rng.int(0, 0xffff)));
    default:
      return rng.pick(['Action: ', 'Thought: x\nAction: ', '{"Correctness": ', '```json\n']) + rng.string(rng.int(0, 3000), "ab(),'\"\\[]{} ");
  }
}

function generate(rng: Prng, view: ExecutorView): string {
  const valid = (): string => {
    const action: GuiAction = randomAction(rng, view.screen);
    switch (rng.int(0, 4)) {
      case 0:
        return action.type === 'fail' || action.type === 'answer' ? formatPlannerOutput('t', { kind: 'answer', text: 'x' }) : formatExecutorOutput('thought', action, view);
      case 1:
        return rng.pick(EXECUTOR_SEEDS);
      case 2:
        return rng.pick(PLANNER_SEEDS);
      default:
        return rng.pick(JUDGE_SEEDS);
    }
  };
  const roll = rng.next();
  if (roll < 0.15) return valid();
  if (roll < 0.75) return mutate(rng, valid());
  return randomText(rng);
}

describe('parser fuzzing', function () {
  this.timeout(120_000);

  it(`survives ${INPUTS} mutated and random model outputs with well-formed results`, () => {
    const rng = new Prng(0xc0da);
    const accepted = { executor: 0, planner: 0, judge: 0, generator: 0 };
    const thrown: string[] = [];
    for (let i = 0; i < INPUTS; i++) {
      const view = rng.pick(VIEWS);
      const input = generate(rng, view);
      try {
        const executor = parseExecutorOutput(input, view);
        if (executor.ok) {
          accepted.executor += 1;
          assert.equal(typeof executor.thought, 'string');
          const action = guiActionSchema.parse(executor.action);
          const placed = 'x' in action && action.x !== undefined && action.y !== undefined ? [{ x: action.x, y: action.y }] : [];
          for (const point of 'from' in action ? [action.from, action.to] : placed) {
            assert.ok(point.x < view.screen.width && point.y < view.screen.height, `${JSON.stringify(action)} off screen for ${JSON.stringify(input)}`);
          }
        } else {
          assert.ok(executor.reason.length > 0);
        }

        const planner = parsePlannerOutput(input);
        if (planner.ok) {
          accepted.planner += 1;
          assert.ok(['instruction', 'answer', 'done', 'fail'].includes(planner.action.kind));
          if (planner.action.kind === 'instruction') assert.ok(planner.thought.length > 0 && planner.action.text.length > 0);
          if (planner.action.kind === 'answer') guiActionSchema.parse({ type: 'answer', text: planner.action.text });
        } else {
          assert.ok(planner.reason.length > 0);
        }

        const judge = parseJudgeReply(input);
        if (judge.ok) {
          accepted.judge += 1;
          judgeReplySchema.parse(judge.reply);
        } else {
          assert.ok(judge.reason.length > 0);
        }

        const generator = readTaskGeneratorReply(input);
        if (generator.ok) {
          if (generator.instructions.length > 0) accepted.generator += 1;
          for (const instruction of generator.instructions) assert.ok(instruction.trim() !== '' && instruction.length <= MAX_INSTRUCTION_LENGTH);
        } else {
          assert.ok(generator.reason.length > 0);
        }
      } catch (error) {
        thrown.push(`${JSON.stringify(input).slice(0, 200)}: ${String(error)}`);
      }
    }
    assert.deepEqual(thrown, []);
    // The corpus must exercise the success paths too, not only the rejections.
    assert.ok(accepted.executor > 500, JSON.stringify(accepted));
    assert.ok(accepted.planner > 1000, JSON.stringify(accepted));
    assert.ok(accepted.judge > 100, JSON.stringify(accepted));
    assert.ok(accepted.generator > 50, JSON.stringify(accepted));
  });

  it('reads long adversarial replies to the end and finds nothing usable in them', () => {
    // Each of these once took seconds to minutes at this size (quadratic scans): a regression shows
    // as this test running into mocha's timeout. How fast the parsers are is not asserted here.
    const n = 150_000;
    const inputs = ['```' + ' '.repeat(n), 'Correctness: ' + ']'.repeat(n), "{'a': [" + ' ,]'.repeat(n / 3), "Action: type(content='" + "{'a': [".repeat(n / 7), '['.repeat(n)];
    for (const input of inputs) {
      const parsed = [parseExecutorOutput(input, VIEWS[0] as ExecutorView), parsePlannerOutput(input), parseJudgeReply(input)];
      for (const result of parsed) assert.equal(result.ok, false, JSON.stringify(input.slice(0, 30)));
      const tasks = readTaskGeneratorReply(input);
      assert.ok(!tasks.ok || tasks.instructions.length === 0, 'no task in garbage');
    }
  });
});
