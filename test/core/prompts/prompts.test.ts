import assert from 'node:assert/strict';
import { formatExecutorAction, parseExecutorOutput } from '../../../core/executor-parser';
import { parsePlannerOutput } from '../../../core/planner-parser';
import { buildExecutorMessages, EXECUTOR_PROMPT_VERSION } from '../../../core/prompts/executor';
import { buildJudgeMessages, judgeInputOf, JUDGE_PROMPT_VERSION } from '../../../core/prompts/judge';
import { chatMessageSchema, image, imageKeys, text, type ChatMessage } from '../../../core/prompts/messages';
import { buildPlannerMessages, PLANNER_PROMPT_VERSION } from '../../../core/prompts/planner';
import { buildTaskGeneratorMessages, readTaskGeneratorReply, solved, TASK_GENERATOR_PROMPT_VERSION } from '../../../core/prompts/task-generator';
import type { TrajectoryManifest } from '../../../core/trajectory';

const textOf = (message: ChatMessage | undefined): string =>
  message === undefined ? '' : typeof message.content === 'string' ? message.content : message.content.map((p) => (p.type === 'text' ? p.text : `[${p.key}]`)).join('\n');
const valid = (messages: ChatMessage[]): ChatMessage[] => messages.map((m) => chatMessageSchema.parse(m));

describe('prompt messages', () => {
  it('refers to screenshots by key', () => {
    assert.deepEqual(text('hi'), { type: 'text', text: 'hi' });
    assert.deepEqual(image('k'), { type: 'image_key', key: 'k' });
    assert.deepEqual(image('k', 'low'), { type: 'image_key', key: 'k', resolution: 'low' });
    const messages: ChatMessage[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: [text('a'), image('one'), image('two', 'high')] },
    ];
    assert.deepEqual(imageKeys(messages), ['one', 'two']);
    assert.equal(chatMessageSchema.safeParse({ role: 'tool', content: 'x' }).success, false);
    assert.equal(chatMessageSchema.safeParse({ role: 'user', content: [{ type: 'image_url', url: 'data:' }] }).success, false);
  });

  it('versions every template', () => {
    assert.deepEqual([PLANNER_PROMPT_VERSION, EXECUTOR_PROMPT_VERSION, JUDGE_PROMPT_VERSION, TASK_GENERATOR_PROMPT_VERSION], [
      'coda-planner-ans/v2',
      'uitars-1.5-computer/v1',
      'seagent-judge/v2',
      'task-generator/v2',
    ]);
  });
});

describe('planner prompt', () => {
  const turn = (i: number) => ({ thought: `thought ${i}`, actionText: `action ${i}`, screenshotKey: `shot-${i}` });

  it('starts with the task and the current screen', () => {
    const messages = valid(buildPlannerMessages({ instruction: 'Store 2^10 in q.', history: [], screenshotKey: 'shot-0', software: 'KAlgebra' }));
    assert.deepEqual(messages.map((m) => m.role), ['system', 'user']);
    assert.match(textOf(messages[0]), /ANS <answer>/);
    assert.match(textOf(messages[0]), /^DONE\s/m);
    assert.match(textOf(messages[0]), /^FAIL\s/m);
    assert.match(textOf(messages[0]), /select or delete what is there before typing/);
    assert.equal(textOf(messages[1]), 'Task (in KAlgebra): Store 2^10 in q.\n\n\nScreen now, before step 1:\n[shot-0]\nWhat is the next step?');
    assert.deepEqual(imageKeys(messages), ['shot-0']);
  });

  it('shows only the previous and the current screenshot; earlier turns are text', () => {
    const messages = valid(buildPlannerMessages({ instruction: 'x', history: [turn(0), turn(1), turn(2)], screenshotKey: 'shot-3' }));
    assert.deepEqual(imageKeys(messages), ['shot-2', 'shot-3']);
    assert.deepEqual(messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
    const earlier = textOf(messages[1]);
    assert.match(earlier, /^Task: x\n\nEarlier steps \(their screenshots are no longer shown\):\n\nStep 1\nThought: thought 0\nAction: action 0/);
    assert.match(earlier, /Step 2\nThought: thought 1\nAction: action 1\n\n\nScreen before step 3:\n\[shot-2\]$/);
    assert.doesNotMatch(earlier, /thought 2/);
    assert.deepEqual(parsePlannerOutput(textOf(messages[2])), { ok: true, thought: 'thought 2', action: { kind: 'instruction', text: 'action 2' } });
    assert.match(textOf(messages[3]), /^Screen now, before step 4:\n\[shot-3\]/);
  });

  it('keeps one earlier turn as the previous screenshot and its reply', () => {
    const messages = buildPlannerMessages({ instruction: 'x', history: [turn(0)], screenshotKey: 'shot-1' });
    assert.deepEqual(imageKeys(messages), ['shot-0', 'shot-1']);
    assert.deepEqual(messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
    assert.equal(textOf(messages[1]), 'Task: x\n\n\nScreen before step 1:\n[shot-0]');
  });
});

describe('executor prompt', () => {
  it('lists exactly the UI-TARS-1.5 calls and carries the planner\'s thought as the instruction', () => {
    const messages = valid(buildExecutorMessages({ instruction: 'Click the "Calculator" tab at the top left.', screenshotKey: 'shot-4' }));
    const prompt = textOf(messages[0]);
    const calls = [...prompt.matchAll(/^([a-z_]+)\(/gm)].map((m) => m[1]);
    assert.deepEqual(calls, ['click', 'left_double', 'right_single', 'drag', 'hotkey', 'type', 'scroll', 'wait', 'finished', 'call_user']);
    assert.match(prompt, /^click\(start_box='\(x1,y1\)'\)$/m);
    assert.match(prompt, /^drag\(start_box='\(x1,y1\)', end_box='\(x3,y3\)'\)$/m);
    assert.match(prompt, /^scroll\(start_box='\(x1,y1\)', direction='down or up or right or left'\)/m);
    assert.match(prompt, /^hotkey\(key='ctrl c'\)/m);
    assert.match(prompt, /End the content with \\n to submit it\./);
    assert.match(prompt, /## User Instruction\nClick the "Calculator" tab at the top left\.$/);
    assert.deepEqual(imageKeys(messages), ['shot-4']);
    assert.equal(messages.at(-1)?.role, 'user');
  });

  it('speaks the syntax the parser reads and the formatter writes', () => {
    const view = { screen: { width: 1280, height: 800 } };
    const prompt = textOf(buildExecutorMessages({ instruction: 'x', screenshotKey: 'k' })[0]);
    for (const action of [{ type: 'click', x: 1, y: 1 }, { type: 'double_click', x: 1, y: 1 }, { type: 'right_click', x: 1, y: 1 }, { type: 'wait', seconds: 5 }, { type: 'done' }, { type: 'call_user' }] as const) {
      const call = formatExecutorAction(action, view);
      assert.ok(prompt.includes(`\n${call.slice(0, call.indexOf('('))}(`), call);
      assert.ok(parseExecutorOutput(`Action: ${call}`, view).ok);
    }
  });

  it('sends earlier replies as text before the current screenshot', () => {
    const messages = buildExecutorMessages({ instruction: 'x', screenshotKey: 'now', history: ["Thought: a\nAction: wait()"] });
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'user']);
    assert.equal(messages[1]?.content, "Thought: a\nAction: wait()");
  });
});

describe('judge prompt', () => {
  const input = {
    instruction: 'Store 2^10 in q.',
    steps: [
      { screenshotKey: 's0', actionText: 'click the input' },
      { screenshotKey: 's1', actionText: 'type "q := 2^10" then Enter' },
    ],
    finalScreenshotKey: 's2',
    resolution: 'low' as const,
  };

  it('shows the task, every screenshot at the asked resolution and every action, and asks for the SEAgent fields', () => {
    const messages = valid(buildJudgeMessages(input));
    assert.deepEqual(imageKeys(messages), ['s0', 's1', 's2']);
    const parts = messages[1]?.content;
    assert.ok(Array.isArray(parts));
    assert.deepEqual(parts.filter((p) => p.type === 'image_key').map((p) => p.resolution), ['low', 'low', 'low']);
    const user = textOf(messages[1]);
    assert.match(user, /^Task: Store 2\^10 in q\.\n\nThe agent took 2 step\(s\)\./);
    assert.match(user, /Step 1: click the input/);
    assert.match(user, /Step 2: type "q := 2\^10" then Enter/);
    const system = textOf(messages[0]);
    for (const field of ['Correctness', 'Redundant', 'First_Error_Step']) assert.match(system, new RegExp(field));
    assert.equal(buildJudgeMessages({ ...input, resolution: 'high' })[1]?.content.length, parts.length);
  });

  it('builds its input from a stored trajectory', () => {
    const manifest = {
      task: { instruction: 'Store 2^10 in q.', maxSteps: 5 },
      initialScreenshotKey: 's0',
      steps: [
        { screenshotKey: 's0', planner: { thought: 'Click the input.' }, action: { type: 'click', x: 5, y: 6 } },
        { screenshotKey: 's1', planner: { thought: 'Hmm.' }, action: null, error: 'no "Action:" line in the planner output' },
        { screenshotKey: 's2', planner: { thought: 'Done.' }, action: null },
      ],
    } as unknown as TrajectoryManifest;
    const judged = judgeInputOf(manifest, 'high');
    assert.deepEqual(judged, {
      instruction: 'Store 2^10 in q.',
      steps: [
        { screenshotKey: 's0', actionText: 'Click the input. -> click at (5, 6)' },
        { screenshotKey: 's1', actionText: 'Hmm. -> no action (no "Action:" line in the planner output)' },
        { screenshotKey: 's2', actionText: 'Done. -> no action (malformed output)' },
      ],
      finalScreenshotKey: 's2',
      resolution: 'high',
    });
    assert.equal(judgeInputOf({ ...manifest, finalScreenshotKey: 's9' }, 'low').finalScreenshotKey, 's9');
    assert.equal(judgeInputOf({ ...manifest, steps: [] }, 'low').finalScreenshotKey, 's0');
  });

  it('shows a subsample of a long trajectory to a judge with an image limit, and says so', () => {
    const steps = Array.from({ length: 9 }, (_, i) => ({ screenshotKey: `s${i}`, planner: { thought: `t${i}` }, action: { type: 'wait', seconds: 1 } }));
    const manifest = { task: { instruction: 'Wait.', maxSteps: 10 }, initialScreenshotKey: 's0', finalScreenshotKey: 's9', steps } as unknown as TrajectoryManifest;
    const judged = judgeInputOf(manifest, 'low', 4);
    assert.equal(judged.totalScreens, 10);
    const messages = buildJudgeMessages(judged);
    assert.deepEqual(imageKeys(messages), ['s0', 's3', 's6', 's9']);
    const user = textOf(messages[1]);
    assert.match(user, /4 of its 10 screens are shown: the first, the last and evenly spaced ones between; every step's action is listed\./);
    for (let i = 1; i <= 9; i++) assert.match(user, new RegExp(`Step ${i}: t${i - 1} -> wait 1 s`));
    assert.doesNotMatch(user, /Screen before step 2:/);
    assert.equal(judgeInputOf(manifest, 'low', 10).totalScreens, undefined);
  });
});

describe('task generator prompt', () => {
  const seeds = [
    { id: 'A-01', instruction: 'Calculate the conjugate of (1 + i) in KAlgebra and store the answer in variable `p`.' },
    { id: 'C-01', instruction: 'Calculate log2(3) and store it in p.' },
  ];

  it('shows the seeds and asks for N atomic tasks as JSON', () => {
    const messages = valid(buildTaskGeneratorMessages({ software: 'KAlgebra', seeds, count: 30, maxSteps: 5 }));
    assert.match(textOf(messages[0]), /at most 5 GUI actions/);
    assert.match(textOf(messages[0]), /\{"tasks": \[\{"instruction": "\.\.\."\}, \.\.\.\]\}/);
    assert.equal(textOf(messages[1]), `Here are real tasks for KAlgebra:\n1. ${seeds[0]?.instruction}\n2. ${seeds[1]?.instruction}\n\nWrite 30 new tasks.`);
    assert.deepEqual(imageKeys(messages), []);
  });

  it('asks not to repeat the tasks already written', () => {
    const messages = buildTaskGeneratorMessages({ software: 'KAlgebra', seeds, count: 10, maxSteps: 5, avoid: ['Store 2^10 in q.'] });
    assert.match(textOf(messages[1]), /These tasks are already written; do not repeat them:\n- Store 2\^10 in q\.\n\nWrite 10 new tasks\.$/);
  });

  it('shows the tasks of earlier rounds apart by verdict, with their round and share solved, before what this set has written', () => {
    const earlier = [
      { round: 1, instruction: 'Store 2^10 in q.', attempts: { judged: 2, approved: 1 } },
      { round: 1, instruction: 'Plot y = sin(x).', attempts: { judged: 2, approved: 0 } },
      { round: 2, instruction: 'Compute 12*7+5.' },
      { round: 2, instruction: 'Export the log.', attempts: { judged: 0, approved: 0 } },
    ];
    assert.deepEqual(earlier.map(solved), [true, false, undefined, undefined]);
    const user = textOf(buildTaskGeneratorMessages({ software: 'KAlgebra', seeds, count: 10, maxSteps: 5, avoid: ['Store 3^10 in r.'], earlier, earlierTotal: 7 })[1]);
    assert.equal(
      user.slice(user.indexOf('\n\nTasks of earlier rounds') + 2),
      [
        'Tasks of earlier rounds (the latest 4 of 7): the agent has practised them already; do not repeat them or reword them.',
        'Solved by the agent: write harder variants of these (more steps, other values, goals combined), not the same tasks:',
        '- [round 1, solved in 1 of 2 attempts] Store 2^10 in q.',
        'Not solved by the agent: write simpler tasks that practise their steps one at a time, or other tasks of the same kind:',
        '- [round 1, solved in 0 of 2 attempts] Plot y = sin(x).',
        'Not judged (no attempt finished):',
        '- [round 2] Compute 12*7+5.',
        '- [round 2] Export the log.',
        '',
        'These tasks are already written; do not repeat them:',
        '- Store 3^10 in r.',
        '',
        'Write 10 new tasks.',
      ].join('\n'),
    );
    const onlySolved = textOf(buildTaskGeneratorMessages({ software: 'KAlgebra', seeds, count: 10, maxSteps: 5, earlier: earlier.slice(0, 1) })[1]);
    assert.match(onlySolved, /Tasks of earlier rounds: the agent has practised them already; do not repeat them or reword them\.\nSolved by the agent: [^\n]+\n- \[round 1, solved in 1 of 2 attempts\] Store 2\^10 in q\.\n\nWrite 10 new tasks\.$/);
    assert.doesNotMatch(onlySolved, /Not solved|Not judged/);
    assert.doesNotMatch(textOf(buildTaskGeneratorMessages({ software: 'KAlgebra', seeds, count: 10, maxSteps: 5, earlier: [] })[1]), /earlier rounds/);
  });

  it('reads the instructions of a reply, repairing damaged JSON and naming the items it cannot use', () => {
    const reply = `Here you go:\n\`\`\`json\n{'tasks': [
      {'instruction': 'Store 2^10 in variable q.'},
      {"instruction": "Plot y = sin(x)   in the 2D graph tab."},
      {"title": "no instruction"},
      "Compute 5! and store it in f.",
      {"instruction": "${'x'.repeat(2001)}"},
    ]}\n\`\`\``;
    assert.deepEqual(readTaskGeneratorReply(reply), {
      ok: true,
      instructions: ['Store 2^10 in variable q.', 'Plot y = sin(x) in the 2D graph tab.', 'Compute 5! and store it in f.'],
      invalid: ['item 3 has no instruction', 'item 5 is longer than 2000 characters'],
    });
  });

  it('accepts a bare list and fails with a reason when there is no list', () => {
    assert.deepEqual(readTaskGeneratorReply('["Open the dictionary tab."]'), { ok: true, instructions: ['Open the dictionary tab.'], invalid: [] });
    assert.deepEqual(readTaskGeneratorReply('I cannot help with that.'), { ok: false, reason: 'no JSON object or list found in the reply' });
    assert.deepEqual(readTaskGeneratorReply('{"items": []}'), { ok: false, reason: 'the reply has no list of tasks' });
    assert.deepEqual(readTaskGeneratorReply('{"tasks": [1]}'), { ok: true, instructions: [], invalid: ['item 1 has no instruction'] });
  });
});
