import assert from 'node:assert/strict';
import { MAX_JUDGE_REPLY_CHARS, parseJudgeReply } from '../../../core/judge/reply';

describe('judge reply (SEAgent shape)', () => {
  it('reads a fenced JSON reply after free text', () => {
    const text = 'The final screen shows p = 1+-i.\n```json\n{"Thoughts": "p holds the conjugate.", "Correctness": true, "Redundant": [], "First_Error_Step": null}\n```';
    assert.deepEqual(parseJudgeReply(text), {
      ok: true,
      reply: { correctness: true, redundant: [], firstErrorStep: null, reasoning: 'p holds the conjugate.' },
    });
  });

  it('reads Python literals: True/False/None, single quotes, trailing commas', () => {
    const text = "{'Correctness': False, 'Redundant': [3, 2, 3,], 'First_Error_Step': 4, 'Reason': 'typed into the wrong field',}";
    assert.deepEqual(parseJudgeReply(text), {
      ok: true,
      reply: { correctness: false, redundant: [2, 3], firstErrorStep: 4, reasoning: 'typed into the wrong field' },
    });
  });

  it('matches keys regardless of case and punctuation, and values written as text', () => {
    const text = '{"correctness": "True", "redundant": "None", "first error step": "2"}';
    assert.deepEqual(parseJudgeReply(text), { ok: true, reply: { correctness: true, redundant: [], firstErrorStep: 2 } });
    assert.deepEqual(parseJudgeReply('{"CORRECTNESS": "no", "Redundant": "1, 2", "First-Error-Step": "None"}'), {
      ok: true,
      reply: { correctness: false, redundant: [1, 2], firstErrorStep: null },
    });
    assert.deepEqual(parseJudgeReply('{"Correctness": true, "Redundant": 3, "First_Error_Step": null}'), {
      ok: true,
      reply: { correctness: true, redundant: [3], firstErrorStep: null },
    });
  });

  it('reads Key: value lines as judges write them in markdown', () => {
    const text = 'Analysis of the steps...\n**Correctness**: True\n- Redundant: [2]\nFirst_Error_Step: None\n';
    assert.deepEqual(parseJudgeReply(text), { ok: true, reply: { correctness: true, redundant: [2], firstErrorStep: null } });
    const mixed = 'I think [step 2] was odd.\nCorrectness: False\nRedundant: []\nFirst Error Step: 3';
    assert.deepEqual(parseJudgeReply(mixed), { ok: true, reply: { correctness: false, redundant: [], firstErrorStep: 3 } });
  });

  it('fails with a reason when a field is missing or wrong', () => {
    const cases: Array<[string, string]> = [
      ['The task looks complete.', 'no Correctness, Redundant or First_Error_Step in the judge reply'],
      ['{"verdict": "success"}', 'no Correctness, Redundant or First_Error_Step in the judge reply'],
      ['{"Correctness": true, "Redundant": []}', 'the judge reply has no First_Error_Step'],
      ['{"Correctness": true, "First_Error_Step": null}', 'the judge reply has no Redundant'],
      ['{"Redundant": [], "First_Error_Step": null}', 'the judge reply has no Correctness'],
      ['{"Correctness": "maybe", "Redundant": [], "First_Error_Step": null}', 'Correctness must be true or false, found "maybe"'],
      ['{"Correctness": true, "Redundant": [0], "First_Error_Step": null}', 'Redundant must list step numbers (1-based), found [0]'],
      ['{"Correctness": true, "Redundant": ["two"], "First_Error_Step": null}', 'Redundant must list step numbers (1-based), found ["two"]'],
      ['{"Correctness": false, "Redundant": [], "First_Error_Step": 1.5}', 'First_Error_Step must be a step number (1-based) or None, found 1.5'],
      ['{"Correctness": false, "Redundant": [], "First_Error_Step": -1}', 'First_Error_Step must be a step number (1-based) or None, found -1'],
      ['Correctness: perhaps\nRedundant: []\nFirst_Error_Step: None', 'Correctness must be true or false, found "perhaps"'],
    ];
    for (const [text, reason] of cases) assert.deepEqual(parseJudgeReply(text), { ok: false, reason }, text);
  });

  it('reads fields padded with long runs of blanks (trimmed, not matched by a pattern), and refuses a reply longer than its cap unread', () => {
    const blanks = ' '.repeat(20_000);
    const lines = `Correctness: True${blanks},\nRedundant: 1,${blanks}2\nFirst_Error_Step:${blanks}None${blanks}`;
    assert.deepEqual(parseJudgeReply(lines), { ok: true, reply: { correctness: true, redundant: [1, 2], firstErrorStep: null } });
    const json = `{"Correctness": "${blanks}yes${blanks}", "Redundant": "${blanks}", "First_Error_Step": "${blanks}3${blanks}"}`;
    assert.deepEqual(parseJudgeReply(json), { ok: true, reply: { correctness: true, redundant: [], firstErrorStep: 3 } });
    const fields = 'Correctness: True\nRedundant: []\nFirst_Error_Step: None\n';
    assert.equal(parseJudgeReply(fields.padEnd(MAX_JUDGE_REPLY_CHARS, ' ')).ok, true);
    assert.deepEqual(parseJudgeReply(fields.padEnd(MAX_JUDGE_REPLY_CHARS + 1, ' ')), {
      ok: false,
      reason: `the judge reply is ${MAX_JUDGE_REPLY_CHARS + 1} characters long; at most ${MAX_JUDGE_REPLY_CHARS} are read`,
    });
  });
});
