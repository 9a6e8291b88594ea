import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { loadConfig, parseConfig } from '../../../config/load';
import { REPO_CONFIG } from '../../../infra/ephemeral';
import { validationProblems } from '../../support/validation';

const repoText = readFileSync(REPO_CONFIG, 'utf8');

/** The repo's temporal.yaml with `edit` applied to its parsed form. */
function edited(edit: (doc: Record<string, any>) => void): string {
  const doc = parse(repoText) as Record<string, any>;
  edit(doc);
  return stringify(doc);
}

const problemsOf = (text: string, env: Record<string, string> = {}): string[] =>
  validationProblems(() => parseConfig(text, '/deploy/temporal.yaml', env), /^\/deploy\/temporal\.yaml is invalid:/);

describe('temporal.yaml loading', () => {
  it('loads the repository file on embedded defaults', () => {
    const config = loadConfig(REPO_CONFIG, {});
    assert.equal(config.temporal.address, '127.0.0.1:7233');
    assert.equal(config.temporal.namespace, 'coda');
    assert.deepEqual(config.temporal.searchAttributes, {
      CodaSoftware: 'Keyword',
      CodaStage: 'Keyword',
      CodaRound: 'Int',
      CodaRun: 'Keyword',
    });
    assert.equal(config.hosts[0]?.kind, 'local');
    assert.equal(config.hosts[0]?.kind === 'local' && config.hosts[0].desktops, 2);
    assert.equal(config.storage.bucket, 'coda');
    assert.equal(config.storage.secretAccessKeyEnv, 'CODA_S3_SECRET_ACCESS_KEY');
    assert.equal(config.models.judges.length, 2);
    assert.equal(config.schedules[0]?.cron, '0 2 * * *');
    assert.equal(config.dataDir, path.join(path.dirname(REPO_CONFIG), '.data'));
  });

  it('substitutes ${NAME} and ${NAME:-default}, keeping numbers numeric', () => {
    const config = loadConfig(REPO_CONFIG, {
      CODA_TEMPORAL_ADDRESS: 'temporal.internal:7233',
      CODA_LOCAL_DESKTOPS: '6',
      CODA_S3_BUCKET: 'lab-trajectories',
    });
    assert.equal(config.temporal.address, 'temporal.internal:7233');
    assert.equal(config.hosts[0]?.kind === 'local' && config.hosts[0].desktops, 6);
    assert.equal(config.storage.bucket, 'lab-trajectories');
    assert.equal(config.storage.endpoint, 'http://127.0.0.1:9000');
  });

  it('reads $CODA_CONFIG relative paths against the file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'coda-config-'));
    try {
      const file = path.join(dir, 'temporal.yaml');
      writeFileSync(file, repoText);
      const config = loadConfig(file, { CODA_DATA_DIR: 'state' });
      assert.equal(config.file, file);
      assert.equal(config.dataDir, path.join(dir, 'state'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names a missing field', () => {
    const problems = problemsOf(edited((d) => delete d.storage.bucket));
    assert.deepEqual(problems, ['storage.bucket: Invalid input: expected string, received undefined']);
  });

  it('names a field of the wrong type and what was expected', () => {
    const problems = problemsOf(edited((d) => (d.hosts[0].desktops = 'two')));
    assert.deepEqual(problems, ['hosts[0].desktops: Invalid input: expected number, received string']);
  });

  it('rejects a schedule on an unknown task queue', () => {
    const problems = problemsOf(edited((d) => (d.schedules[0].taskQueue = 'gpu-fast')));
    assert.deepEqual(problems, ['schedules[0].taskQueue: unknown task queue "gpu-fast": expected one of orchestrator, gpu, desktopLeases']);
  });

  it('rejects two owners of one task queue', () => {
    const problems = problemsOf(edited((d) => (d.hosts[0].taskQueue = d.taskQueues.orchestrator)));
    assert.deepEqual(problems, ['hosts[0].taskQueue: task queue "coda-orchestrator" is already used by taskQueues.orchestrator']);
  });

  it('rejects unknown keys (a typo is not silently ignored)', () => {
    const problems = problemsOf(edited((d) => (d.storage.bucketName = 'x')));
    assert.deepEqual(problems, ['storage: Unrecognized key: "bucketName"']);
  });

  it('rejects a secret where the NAME of its variable belongs', () => {
    const problems = problemsOf(edited((d) => (d.models.planner.apiKeyEnv = 'sk-live-12345')));
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /^models\.planner\.apiKeyEnv: expected the NAME of an environment variable/);
  });

  it('reports a required variable that is unset', () => {
    const text = repoText.replace('address: ${CODA_TEMPORAL_ADDRESS:-127.0.0.1:7233}', 'address: ${TEMPORAL_HOSTPORT}');
    assert.deepEqual(problemsOf(text), [
      'temporal.address: environment variable TEMPORAL_HOSTPORT is not set and has no default (write ${TEMPORAL_HOSTPORT:-value} to give one)',
    ]);
  });

  it('reports malformed references', () => {
    const empty = repoText.replace('bucket: ${CODA_S3_BUCKET:-coda}', 'bucket: ${}');
    assert.deepEqual(problemsOf(empty), ['storage.bucket: bad environment reference "${}" (expected ${NAME} or ${NAME:-default})']);
    const badName = repoText.replace('bucket: ${CODA_S3_BUCKET:-coda}', 'bucket: ${9LIVES:-coda}');
    assert.deepEqual(problemsOf(badName), [
      'storage.bucket: bad environment reference "${9LIVES:-coda}" (expected ${NAME} or ${NAME:-default})',
    ]);
    const open = repoText.replace('bucket: ${CODA_S3_BUCKET:-coda}', 'bucket: ${CODA_S3_BUCKET');
    assert.deepEqual(problemsOf(open), [
      'storage.bucket: unterminated environment reference in "${CODA_S3_BUCKET" (expected ${NAME} or ${NAME:-default})',
    ]);
  });

  it('validates substituted values like written ones, naming the variable and what it gave', () => {
    assert.deepEqual(problemsOf(repoText, { CODA_LOCAL_DESKTOPS: 'many' }), [
      'hosts[0].desktops: Invalid input: expected number, received string (${CODA_LOCAL_DESKTOPS:-2} gave "many")',
    ]);
    assert.deepEqual(problemsOf(repoText, { CODA_S3_PREFIX: 'team prefix', CODA_VIEWER_PORT: '70000' }), [
      'storage.prefix: expected a key prefix like `coda` or `team/coda` (${CODA_S3_PREFIX:-coda} gave "team prefix")',
      'viewer.port: Too big: expected number to be <=65535 (${CODA_VIEWER_PORT:-8300} gave "70000")',
    ]);
  });

  it('keeps a substituted value text, never read again as YAML, unless its field takes a number or a boolean', () => {
    const env = {
      CODA_PLANNER_MODEL: '@cf/meta/llama-3.1-8b-instruct',
      CODA_GRPO_TRAINER: '"/opt/open rlhf/bin/python3" -m openrlhf.cli.train_ppo_ray',
      CODA_S3_PREFIX: '2024',
      CODA_S3_BUCKET: 'true',
      CODA_EXECUTOR_MODEL: '[a, b]',
      CODA_TASKGEN_MODEL: '{x: 1} # not a comment',
      CODA_LOCAL_DESKTOPS: '6\n',
      CODA_REWARD_PORT: '8901',
    };
    const config = parseConfig(repoText, '/deploy/temporal.yaml', env);
    assert.equal(config.models.planner.model, '@cf/meta/llama-3.1-8b-instruct');
    assert.equal(config.training.basePlanner.model, '@cf/meta/llama-3.1-8b-instruct');
    assert.equal(config.training.grpo.program, '"/opt/open rlhf/bin/python3" -m openrlhf.cli.train_ppo_ray');
    assert.equal(config.storage.prefix, '2024');
    assert.equal(config.storage.bucket, 'true');
    assert.equal(config.models.executor.model, '[a, b]');
    assert.equal(config.models.taskGenerator.model, '{x: 1} # not a comment');
    assert.equal(config.hosts[0]?.kind === 'local' && config.hosts[0].desktops, 6);
    assert.equal(config.training.rewardService.port, 8901);
    const scheduled = edited((d) => {
      d.schedules[0].paused = '${CODA_NIGHTLY_PAUSED:-false}';
      d.schedules[0].input.attempts = '${CODA_NIGHTLY_ATTEMPTS:-2}';
    });
    const schedule = parseConfig(scheduled, '/deploy/temporal.yaml', { CODA_NIGHTLY_PAUSED: 'true' }).schedules[0];
    assert.equal(schedule?.paused, true, 'a boolean field takes true');
    assert.equal(schedule?.input.attempts, '2', 'a free-form value stays text');
    assert.deepEqual(problemsOf(scheduled, { CODA_NIGHTLY_PAUSED: 'yes' }), [
      'schedules[0].paused: Invalid input: expected boolean, received string (${CODA_NIGHTLY_PAUSED:-false} gave "yes")',
    ]);
  });

  it('refuses an alias bomb in the file, naming the file; a variable holding one is only text', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]'];
    const problems = problemsOf(`${repoText}\nbombs:\n${bomb.map((line) => `  ${line}`).join('\n')}\n`);
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /^YAML aliases: Excessive alias count/);
    const config = parseConfig(repoText, '/deploy/temporal.yaml', { CODA_PLANNER_MODEL: bomb.join('\n') });
    assert.equal(config.models.planner.model, bomb.join('\n'));
  });

  it('loads the training section: trainer command templates, the reward service, serving', () => {
    const { training } = loadConfig(REPO_CONFIG, { CODA_GRPO_TRAINER: 'node doubles/openrlhf.js' });
    assert.equal(training.grpo.program, 'node doubles/openrlhf.js');
    assert.equal(training.sft.program, 'llamafactory-cli');
    assert.deepEqual(training.sft.args, ['train', '{config}']);
    assert.ok(training.grpo.args.includes('--ckpt.load_enable'));
    assert.deepEqual(training.rewardService, { host: '127.0.0.1', tokenEnv: 'CODA_REWARD_TOKEN', port: 8900, executorConcurrency: 16, deadlineSeconds: 150, cacheSize: 100_000, maxQueryChars: 1_048_576, maxBodyBytes: 4 * 1024 * 1024, maxConcurrentRequests: 256 });
    assert.equal(training.serving.kind, 'lora');
    const numeric = parseConfig(edited((d) => d.training.grpo.args.push('--train.seed', 7)), '/deploy/temporal.yaml', {});
    assert.deepEqual(numeric.training.grpo.args.slice(-2), ['--train.seed', '7'], 'an unquoted number is a word');
  });

  it('names what is wrong with a trainer command template', () => {
    assert.deepEqual(
      problemsOf(
        edited((d) => {
          d.training.grpo.args = ['--actor.model_name_or_path', '{model}', '--data.prompt_dataset', '{prompts}', '--data.max_images_per_prompt', '{maxImages}'];
          d.training.grpo.args.push('--reward.remote_url', '{rewardUrl}', '--ckpt.path', '{checkpoints}', '--data.seed', '{seed}');
          d.training.sft.args = ['train'];
          d.training.sft.config.output_dir = '/tmp/out';
        }),
      ),
      [
        'training.grpo.args[11]: unknown placeholder {seed}: expected one of {model}, {prompts}, {maxImages}, {rewardUrl}, {checkpoints}, {output}',
        'training.grpo.args: {output} (the folder of the final model) is missing',
        'training.grpo.args: --ckpt.load_enable is missing: without it a retry starts training over',
        'training.sft.args: {config} (the LLaMA-Factory YAML written for this job) is missing',
        'training.sft.config.output_dir: set by the GPU worker for each job; remove it here',
      ],
    );
    assert.deepEqual(problemsOf(edited((d) => (d.training.serving = { kind: 'restart', dir: 'x', command: [] }))), [
      'training.serving.command: Too small: expected array to have >=1 items',
      'training.serving.healthUrl: Invalid input: expected string, received undefined',
    ]);
  });

  it('selects the GRPO backend: OpenRLHF unless training.grpo.backend names TRL, whose command line needs no --ckpt.load_enable; anything else is named', () => {
    assert.equal(loadConfig(REPO_CONFIG, {}).training.grpo.backend, 'openrlhf');
    const trlArgs = ['infra/trainers/trl_grpo.py', '--model', '{model}', '--prompts', '{prompts}', '--reward-url', '{rewardUrl}', '--checkpoints', '{checkpoints}', '--output', '{output}'];
    const trl = parseConfig(edited((d) => (d.training.grpo = { backend: 'trl', program: 'python3', args: trlArgs })), '/deploy/temporal.yaml', {});
    assert.deepEqual([trl.training.grpo.backend, trl.training.grpo.args], ['trl', trlArgs]);
    assert.deepEqual(problemsOf(edited((d) => (d.training.grpo = { backend: 'trl', program: 'python3', args: trlArgs.slice(0, -2) }))), ['training.grpo.args: {output} (the folder of the final model) is missing']);
    assert.deepEqual(problemsOf(edited((d) => (d.training.grpo.backend = 'verl'))), ['training.grpo.backend: expected one of openrlhf, trl (the GRPO trainer the command runs)']);
  });

  it('reports YAML syntax errors and unreadable files', () => {
    const problems = problemsOf('temporal:\n  address: [unclosed\n');
    assert.match(problems[0] ?? '', /^YAML syntax: /);
    assert.throws(() => loadConfig('/nonexistent/temporal.yaml', {}), /\/nonexistent\/temporal\.yaml is invalid:\n {2}- cannot read the file/);
  });
});
