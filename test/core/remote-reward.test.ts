import assert from 'node:assert/strict';
import { EXTRA_LOG_NAMES, floatJson, parseRewardRequest, rewardResponse, rewardResponseJson, sampledResponse, zeroRewardLog } from '../../core/remote-reward';

/** A Qwen2-VL templated prompt with two images, as OpenRLHF sends it in `prompts`. */
const PROMPT =
  '<|im_start|>system\nYou operate a desktop.<|im_end|>\n<|im_start|>user\nTask: plot x<|vision_start|><|image_pad|><|vision_end|>' +
  'Screen now:<|vision_start|><|image_pad|><|vision_end|>What next?<|im_end|>\n<|im_start|>assistant\n';
/** The same prompt as decoded from its token ids: each image is one pad per vision token. */
const expanded = (pads: number): string => PROMPT.replaceAll('<|image_pad|>', '<|image_pad|>'.repeat(pads));

describe('OpenRLHF remote reward protocol', () => {
  it('reads one sample, and empty lists (what OpenRLHF 0.11.0 sent the servers after the first)', () => {
    assert.deepEqual(parseRewardRequest({ query: ['q'], prompts: ['p'], labels: ['l'] }), { ok: true, samples: [{ query: 'q', prompt: 'p', label: 'l' }] });
    assert.deepEqual(parseRewardRequest({ query: [], prompts: [], labels: [] }), { ok: true, samples: [] });
  });

  it('names the field of a malformed request', () => {
    const cases: Array<[unknown, RegExp]> = [
      [null, /^body: expected a JSON object/],
      [[1], /^body: expected a JSON object/],
      [{ prompts: [], labels: [] }, /^query: expected a list of strings/],
      [{ query: ['q'], prompts: 'p', labels: ['l'] }, /^prompts: expected a list of strings/],
      [{ query: ['q'], prompts: ['p'], labels: [3] }, /^labels\[0\]: expected a string/],
      [{ query: ['q', 'r'], prompts: ['p'], labels: ['l', 'm'] }, /one entry per sample \(got 2, 1, 2\)/],
    ];
    for (const [body, reason] of cases) {
      const parsed = parseRewardRequest(body);
      assert.equal(parsed.ok, false);
      assert.match((parsed as { reason: string }).reason, reason, JSON.stringify(body));
    }
  });

  it('takes the reply from the query after its prompt, image pads expanded or not, without the end token', () => {
    const reply = 'Thought: click the input field\nAction: click the input field';
    for (const pads of [1, 2691]) {
      assert.deepEqual(sampledResponse(`${expanded(pads)}${reply}<|im_end|>`, PROMPT), { ok: true, text: reply }, `${pads} pads`);
    }
    assert.deepEqual(sampledResponse(`${expanded(4)}${reply}<|im_end|><|endoftext|>\n`, PROMPT), { ok: true, text: reply });
    assert.deepEqual(sampledResponse(`${expanded(4)}${reply}`, PROMPT), { ok: true, text: reply }, 'a reply cut at the length limit has no end token');
    const video = '<|vision_start|><|video_pad|><|vision_end|>';
    assert.deepEqual(sampledResponse(`u${video.replace('<|video_pad|>', '<|video_pad|>'.repeat(9))}r`, `u${video}`), { ok: true, text: 'r' });
  });

  it('drops only a final run of end tokens and the whitespace after it, in one pass from the end (no pattern that backtracks)', () => {
    const reply = 'Thought: done\nAction: DONE';
    const cases: Array<[string, string]> = [
      [`${reply}<|im_end|>`, reply],
      [`${reply}<|im_end|><|endoftext|><|im_end|> \n\t`, reply],
      [`${reply} <|im_end|>`, `${reply} `],
      [`${reply}<|im_end|>x`, `${reply}<|im_end|>x`],
      [`${reply}\n`, `${reply}\n`],
      // The degenerate input of issue 29 (many end tokens, then one other character), kept small here:
      // the service refuses queries beyond training.rewardService.maxQueryChars (test/unit/training/reward-limits.test.ts).
      [`${'<|im_end|>'.repeat(5000)}x`, `${'<|im_end|>'.repeat(5000)}x`],
      ['<|im_end|>'.repeat(5000), ''],
    ];
    for (const [response, text] of cases) assert.deepEqual(sampledResponse(`${PROMPT}${response}`, PROMPT), { ok: true, text }, JSON.stringify(response.slice(0, 60)));
  });

  it('refuses a query that does not continue its prompt', () => {
    const other = sampledResponse(`${expanded(3).replace('plot x', 'plot y')}reply<|im_end|>`, PROMPT);
    assert.deepEqual(other, { ok: false, reason: 'the query does not begin with its prompt (image placeholders aside)' });
  });

  it('answers lists of rewards, scores and numeric logs, one entry per sample, every log name in every answer', () => {
    const response = rewardResponse([
      { reward: 2, score: 1, logs: { type_match: 1 } },
      { reward: 0, score: 0, logs: { executor_failed: 1 }, error: 'executor unreachable' },
    ]);
    const zeros = Object.fromEntries(EXTRA_LOG_NAMES.map((name) => [name, [0, 0]]));
    assert.deepEqual(response, {
      rewards: [2, 0],
      scores: [1, 0],
      extra_logs: { ...zeros, executor_failed: [0, 1], type_match: [1, 0] },
      errors: [null, 'executor unreachable'],
    });
    assert.deepEqual(rewardResponse([]), { rewards: [], scores: [], extra_logs: Object.fromEntries(EXTRA_LOG_NAMES.map((name) => [name, []])), errors: [] });
  });

  it('gives answers about different samples the same extra_logs names (OpenRLHF merges them over a micro batch)', () => {
    const primitive = rewardResponse([{ reward: 2, score: 1, logs: { primitive: 1, type_match: 1 } }]);
    const unparsable = rewardResponse([{ reward: 0, score: 0, logs: { unparsable: 1 }, error: 'planner output malformed' }]);
    assert.deepEqual(Object.keys(primitive.extra_logs), [...EXTRA_LOG_NAMES]);
    assert.deepEqual(Object.keys(unparsable.extra_logs), [...EXTRA_LOG_NAMES]);
  });

  it('writes every number as a float that Python reads as one (0 as 0.0), whole or not', () => {
    assert.deepEqual([0, 2, 1, -0, 0.5, 1.25, 1e21, 1e-7].map(floatJson), ['0.0', '2.0', '1.0', '0.0', '0.5', '1.25', '1e+21', '1e-7']);
    assert.throws(() => floatJson(Number.NaN), /NaN: JSON has no such number/);
    const text = rewardResponseJson(rewardResponse([{ reward: 0, score: 0, logs: { executor_failed: 1 }, error: 'executor "down"' }]));
    assert.match(text, /^\{"rewards":\[0\.0\],"scores":\[0\.0\],"extra_logs":\{"type_match":\[0\.0\],"primitive":\[0\.0\],/);
    assert.match(text, /"executor_failed":\[1\.0\]/);
    assert.doesNotMatch(text, /[[,]\d+[\],]/, 'no whole number without its decimal point');
    assert.deepEqual(JSON.parse(text), rewardResponse([{ reward: 0, score: 0, logs: { executor_failed: 1 }, error: 'executor "down"' }]));
  });
});

describe("the reward service's log of samples answered 0", () => {
  it('logs the first of each reason, then each power of ten of its count with the latest explanation', () => {
    const line = zeroRewardLog();
    const lines: Array<[number, string]> = [];
    for (let i = 1; i <= 1_000; i++) {
      const logged = line(['executor_malformed'], `no start_box (sample ${i})`);
      if (logged !== undefined) lines.push([i, logged]);
    }
    assert.deepEqual(lines, [
      [1, 'reward service: reward 0 (no start_box (sample 1))'],
      [10, 'reward service: 10 samples answered 0 for executor_malformed so far (the latest: no start_box (sample 10))'],
      [100, 'reward service: 100 samples answered 0 for executor_malformed so far (the latest: no start_box (sample 100))'],
      [1_000, 'reward service: 1000 samples answered 0 for executor_malformed so far (the latest: no start_box (sample 1000))'],
    ]);
    assert.equal(line(['timed_out'], 'the executor took over 60 s'), 'reward service: reward 0 (the executor took over 60 s)', 'another reason is counted on its own');
    assert.equal(line([], 'why unknown'), 'reward service: reward 0 (why unknown)');
    assert.equal(line([], 'why unknown'), undefined);
  });
});
