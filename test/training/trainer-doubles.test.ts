import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { prepareDataset, writeGrpoInputs, writeSftInputs, type TrainerInputs } from '../../activities/training/trainer-inputs';
import { startGpuHarness, type GpuHarness } from '../support/gpu-harness';

const DOUBLES = path.resolve(__dirname, '..', '..', 'doubles', 'trainers');

/**
 * The trainer doubles refuse what the real trainers refuse, with their messages and exit codes
 * (argparse's 2 for a command line, 1 for bad data). Each case starts from inputs the GPU worker
 * wrote (activities/training/trainer-inputs.ts), which the double accepts, and breaks one thing.
 */
describe('trainer doubles: input validation as the real trainers do it', function () {
  this.timeout(120_000);
  let g: GpuHarness;
  let dir: string;
  let grpo: TrainerInputs;
  let sft: TrainerInputs;
  let sftYaml: string;

  const run = (script: string, args: readonly string[]) => {
    const out = spawnSync(process.execPath, [path.join(DOUBLES, script), ...args], { env: { ...process.env, ...g.h.env }, cwd: dir, encoding: 'utf8' });
    return { code: out.status, stderr: out.stderr, stdout: out.stdout };
  };
  /** The GRPO command line with `flag` set to `value` (appended when absent), without training (0 episodes). */
  const grpoArgs = (changes: Record<string, string | null> = {}): string[] => {
    const args = [...grpo.args];
    for (const [flag, value] of Object.entries({ '--train.num_episodes': '0', ...changes })) {
      const at = args.indexOf(flag);
      if (value === null) args.splice(at, args[at + 1]?.startsWith('--') === false ? 2 : 1);
      else if (at === -1) args.push(flag, value);
      else args[at + 1] = value;
    }
    return args;
  };
  const prompts = (): string => grpo.args[grpo.args.indexOf('--data.prompt_dataset') + 1]!;
  /** A copy of the prompt JSONL with `edit` applied to its rows; the command line reading it. */
  const editedPrompts = (name: string, edit: (rows: any[]) => void): string[] => {
    const rows = readFileSync(prompts(), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    edit(rows);
    const file = path.join(dir, `${name}.jsonl`);
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n'));
    return grpoArgs({ '--data.prompt_dataset': file });
  };
  /** An SFT config written from the worker's with `edit` applied; the command line reading it. */
  const sftArgs = (edit: (config: Record<string, any>) => void = () => undefined): string[] => {
    const config = parse(readFileSync(sftYaml, 'utf8')) as Record<string, any>;
    config.num_train_epochs = 0;
    edit(config);
    const file = path.join(dir, `sft-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, stringify(config));
    return ['train', file];
  };

  before(async () => {
    g = await startGpuHarness({ name: 'doubles' });
    dir = mkdtempSync(path.join(tmpdir(), 'coda-doubles-'));
    const { store } = g.h.stack;
    const signal = new AbortController().signal;
    const grpoData = await prepareDataset(store, g.grpoDataset, path.join(dir, 'datasets'), signal);
    grpo = writeGrpoInputs(g.h.config.training.grpo, grpoData, { inputs: path.join(dir, 'grpo'), checkpoints: path.join(dir, 'grpo-ckpt'), output: path.join(dir, 'grpo-out') }, 'Qwen/Qwen2.5-VL-32B-Instruct', 'http://127.0.0.1:9/get_reward');
    const sftData = await prepareDataset(store, g.sftDataset, path.join(dir, 'datasets'), signal);
    sft = writeSftInputs(g.h.config.training.sft, sftData, { inputs: path.join(dir, 'sft'), checkpoints: path.join(dir, 'sft-ckpt'), output: path.join(dir, 'sft-out') }, { model: 'Qwen/Qwen2.5-VL-32B-Instruct' }, undefined, g.h.config.models.planner.image);
    sftYaml = sft.args[1]!;
  });
  after(async () => {
    await g?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("accept the GPU worker's inputs and the production command lines", () => {
    const openrlhf = run('openrlhf.js', grpoArgs());
    assert.equal(openrlhf.code, 0, openrlhf.stderr);
    assert.match(openrlhf.stdout, /TEST DOUBLE of OpenRLHF/);
    const llamafactory = run('llamafactory.js', sftArgs());
    assert.equal(llamafactory.code, 0, llamafactory.stderr);
  });

  it("the SFT YAML trains each row's last turn only, at the planner's image size (models.planner.image in pixels)", () => {
    const config = parse(readFileSync(sftYaml, 'utf8')) as Record<string, unknown>;
    const box = g.h.config.models.planner.image!;
    assert.equal(config.mask_history, true);
    assert.equal(config.image_max_pixels, box.width * box.height);
  });

  it("LLaMA-Factory: steps, log lines and checkpoints as the real trainer's on 13 rows, batch 1 x accumulation 8, 3 epochs", () => {
    const config = parse(readFileSync(sftYaml, 'utf8')) as Record<string, any>;
    const info = JSON.parse(readFileSync(path.join(config.dataset_dir, 'dataset_info.json'), 'utf8')) as Record<string, any>;
    const rows = JSON.parse(readFileSync(path.join(config.dataset_dir, info.coda_sft.file_name), 'utf8')) as unknown[];
    const folder = path.join(dir, 'sft-13');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'rows.json'), JSON.stringify(Array.from({ length: 13 }, (_, i) => rows[i % rows.length])));
    writeFileSync(path.join(folder, 'dataset_info.json'), JSON.stringify({ coda_sft: { ...info.coda_sft, file_name: 'rows.json' } }));
    const output = path.join(dir, 'sft-13-out');
    const out = run('llamafactory.js', sftArgs((c) => Object.assign(c, { dataset_dir: folder, media_dir: config.dataset_dir, output_dir: output, per_device_train_batch_size: 1, gradient_accumulation_steps: 8, num_train_epochs: 3, save_steps: 50, logging_steps: 1 })));
    assert.equal(out.code, 0, out.stderr);
    const lines = readFileSync(path.join(output, 'trainer_log.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
    assert.deepEqual(lines.map((l) => [l.current_steps, l.total_steps, Math.round(l.epoch! * 1000) / 1000, 'loss' in l]), [
      [1, 6, 0.615, true],
      [2, 6, 1, true],
      [3, 6, 1.615, true],
      [4, 6, 2, true],
      [5, 6, 2.615, true],
      [6, 6, 3, true],
      [6, 6, 3, false],
    ]);
    assert.deepEqual(readdirSync(output).filter((d) => d.startsWith('checkpoint-')), ['checkpoint-6'], 'the last step is saved');
    const saved = readdirSync(path.join(output, 'checkpoint-6'));
    for (const name of ['adapter_config.json', 'adapter_model.safetensors', 'optimizer.pt', 'scheduler.pt', 'rng_state.pth', 'training_args.bin', 'trainer_state.json']) assert.ok(saved.includes(name), `${name} in ${saved.join(', ')}`);
  });

  it('OpenRLHF: refuses flags it does not have and badly typed values, as argparse does (exit 2)', () => {
    const cases: Array<[string[], RegExp]> = [
      [grpoArgs({ '--rollout.num_samples_per_prompt': '8' }), /train_ppo_ray\.py: error: unrecognized arguments: --rollout\.num_samples_per_prompt 8/],
      [grpoArgs({ '--pretrain': 'Qwen/Qwen2.5-VL-7B' }), /unrecognized arguments: --pretrain Qwen\/Qwen2\.5-VL-7B/],
      [grpoArgs({ '--rollout.n_samples_per_prompt': 'eight' }), /argument --rollout\.n_samples_per_prompt: invalid int value: 'eight'/],
      [grpoArgs({ '--algo.advantage.estimator': 'grpo' }), /argument --algo\.advantage\.estimator: invalid choice: 'grpo' \(choose from 'gae', 'reinforce'/],
      [grpoArgs({ '--reward.clip_range': '-10' }), /argument --reward\.clip_range: expected 2 arguments/],
      // 0.11.0's importance-sampling flags, replaced in 0.11.2 by is_correction_level/mode/gating.
      [[...grpoArgs(), '--algo.advantage.is_correction_enable'], /unrecognized arguments: --algo\.advantage\.is_correction_enable/],
      [grpoArgs({ '--algo.advantage.is_correction_level': 'sample' }), /argument --algo\.advantage\.is_correction_level: invalid choice: 'sample' \(choose from 'off', 'token', 'seq'\)/],
      [grpoArgs({ '--algo.advantage.is_correction_threshold': 'high' }), /argument --algo\.advantage\.is_correction_threshold: invalid float value: 'high'/],
      // infra/trainers/openrlhf_grpo.py's refusal (real-openrlhf-token.test.ts): the token comes from the environment only.
      [grpoArgs({ '--reward.remote_url': 'http://openrlhf:in-argv-0123456789abcdef@127.0.0.1:9/get_reward' }), /train_ppo_ray\.py: error: --reward\.remote_url http:\/\/127\.0\.0\.1:9\/get_reward: the URL carries credentials, which every user of this machine reads on the command line \(ps\); give the URL without them and the token in CODA_REWARD_TOKEN/],
    ];
    for (const [args, message] of cases) {
      const out = run('openrlhf.js', args);
      assert.equal(out.code, 2, out.stderr);
      assert.match(out.stderr, message);
    }
  });

  it("OpenRLHF: refuses what its own checks after parsing refuse (exit 1)", () => {
    const cases: Array<[string[], RegExp]> = [
      [grpoArgs({ '--rollout.n_samples_per_prompt': '1' }), /group_norm requires n_samples_per_prompt > 1/],
      [grpoArgs({ '--algo.advantage.estimator': 'gae' }), /VLM training does not support critic model/],
      [grpoArgs({ '--rollout.batch_size': '1', '--rollout.micro_batch_size': '8' }), /The number of sample batches must be greater than or equal to the effective number of actor processes/],
      [grpoArgs({ '--data.apply_chat_template': null }), /holds chat messages: pass --data\.apply_chat_template/],
      [[...grpoArgs(), '--algo.advantage.is_correction_threshold', '0.5', '2', '5'], /--algo\.advantage\.is_correction_threshold takes HIGH or LOW HIGH/],
    ];
    for (const [args, message] of cases) {
      const out = run('openrlhf.js', args);
      assert.equal(out.code, 1, `${args.join(' ')}\n${out.stderr}`);
      assert.match(out.stderr, message);
    }
  });

  it('OpenRLHF: refuses a missing image, an image count that does not match the prompt, a label that does not parse, mixed field types and too many images', () => {
    const twoImages = (rows: any[]) => rows.findIndex((r) => r.images.length === 2);
    const missing = path.join(dir, 'gone.png');
    const cases: Array<[string[], RegExp]> = [
      [editedPrompts('missing', (rows) => (rows[0].images = [missing])), /row 0: cannot open image .*gone\.png/],
      [editedPrompts('count', (rows) => rows[twoImages(rows)].images.pop()), /Image features and image tokens do not match: tokens: 2, features 1/],
      [editedPrompts('label', (rows) => (rows[1].label = '{"schema": "coda.grpo-label/v1"}')), /row 1: not a CODA GRPO label \(label: software: .*\)/],
      [editedPrompts('label-text', (rows) => (rows[2].label = 'click the button')), /row 2: not a CODA GRPO label \(label: not JSON\)/],
      [editedPrompts('mixed', (rows) => (rows[3].prompt[0].content = 'You operate a desktop.')), /JSON parse error: Column\(\/prompt\/\[\]\/content\) changed from array to string in row 3/],
      [editedPrompts('no-label', (rows) => delete rows[0].label), /row 0: --data\.label_key label: expected a string label/],
      [grpoArgs({ '--data.max_images_per_prompt': '1' }), /At most 1 image\(s\) may be provided in one prompt/],
    ];
    for (const [args, message] of cases) {
      const out = run('openrlhf.js', args);
      assert.equal(out.code, 1, out.stderr);
      assert.match(out.stderr, message);
    }
  });

  it('LLaMA-Factory: refuses unknown keys, a missing dataset, rows with bad roles, an <image> count that does not match, a missing image', () => {
    const dataDir = (parse(readFileSync(sftYaml, 'utf8')) as { dataset_dir: string }).dataset_dir;
    const info = JSON.parse(readFileSync(path.join(dataDir, 'dataset_info.json'), 'utf8')) as Record<string, any>;
    const rows = JSON.parse(readFileSync(path.join(dataDir, info.coda_sft.file_name), 'utf8')) as any[];
    /** A dataset folder like the worker's, with edited info and rows (images stay in the original folder, as media_dir). */
    const variant = (name: string, editInfo: (i: any) => void, editRows: (r: any[]) => void = () => undefined): string[] => {
      const folder = path.join(dir, `sft-${name}`);
      const i = structuredClone(info);
      const r = structuredClone(rows);
      editInfo(i);
      editRows(r);
      writeFileSync(path.join(dir, `sft-${name}.json`), JSON.stringify(r));
      i.coda_sft.file_name = `../sft-${name}.json`;
      rmSync(folder, { recursive: true, force: true });
      mkdirSync(folder);
      writeFileSync(path.join(folder, 'dataset_info.json'), JSON.stringify(i));
      return sftArgs((c) => {
        c.dataset_dir = folder;
        c.media_dir = dataDir;
      });
    };
    const cases: Array<[string[], RegExp]> = [
      [sftArgs((c) => (c.learning_rat = 1e-5)), /Some keys are not used by the HfArgumentParser: \['learning_rat'\]/],
      [sftArgs((c) => (c.dataset = 'coda_rl')), /Undefined dataset coda_rl in dataset_info\.json\./],
      [sftArgs((c) => (c.template = 'qwen')), /template qwen: the double implements qwen2_vl only/],
      [variant('no-system-tag', (i) => delete i.coda_sft.tags.system_tag), /row 0: Invalid role tag in message 0 \(role = "system", expected user\)/],
      [variant('tokens', () => undefined, (r) => (r[0].messages[1].content = r[0].messages[1].content.replace('<image>', ''))), /row 0: The number of images does not match the number of <image> tokens/],
      [variant('image', () => undefined, (r) => (r[2].images[0] = 'images/none.png')), /row 2: cannot open image images\/none\.png/],
      [variant('odd', () => undefined, (r) => r[1].messages.pop()), /row 1: Invalid message count/],
    ];
    for (const [args, message] of cases) {
      const out = run('llamafactory.js', args);
      assert.equal(out.code, 1, out.stderr);
      assert.match(out.stderr, message);
    }
    const usage = run('llamafactory.js', ['export', sftYaml]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /llamafactory-cli: error: the double runs `llamafactory-cli train <config\.yaml>` only/);
  });

  it('the GPU worker refuses a dataset whose rows it cannot train on before any trainer starts', async () => {
    const signal = new AbortController().signal;
    const data = await prepareDataset(g.h.stack.store, g.grpoDataset, path.join(dir, 'datasets'), signal);
    const broken = path.join(dir, 'broken.jsonl');
    const lines = readFileSync(data.dataFile, 'utf8').trim().split('\n');
    const row = JSON.parse(lines[0]!) as { images: string[] };
    row.images = [...row.images, 'images/elsewhere.png'];
    writeFileSync(broken, [JSON.stringify(row), ...lines.slice(1)].join('\n'));
    const folders = { inputs: path.join(dir, 'w'), checkpoints: path.join(dir, 'wc'), output: path.join(dir, 'wo') };
    assert.throws(() => writeGrpoInputs(g.h.config.training.grpo, { ...data, dataFile: broken }, folders, 'm', 'u'), /row 0 is invalid:\n {2}- \d image items in the prompt but \d images/);
    row.images.pop();
    (row as { label?: string }).label = '{}';
    writeFileSync(broken, [JSON.stringify(row), ...lines.slice(1)].join('\n'));
    assert.throws(() => writeGrpoInputs(g.h.config.training.grpo, { ...data, dataFile: broken }, folders, 'm', 'u'), /row 0 is invalid:\n {2}- label: schema: /);
    unlinkSync(path.join(data.dir, JSON.parse(lines[1]!).images.at(-1))); // row 1's current screen (row 2 shows it again)
    assert.throws(() => writeGrpoInputs(g.h.config.training.grpo, data, folders, 'm', 'u'), /row 1 is invalid:\n {2}- image images\/.* is not among the dataset's images/);
  });
});
