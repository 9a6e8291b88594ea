import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../config/load';
import { groupAdvantages } from '../../core/reward';
import type { Size } from '../../core/smart-resize';
import { parseGrpoLabel } from '../../core/training';
import { readPrompt, sampleReplies, type Reading } from '../learning-planner/planner';
import { LearningPolicy, type Choice } from '../learning-planner/policy';
import { hashText, keyedRandom } from '../scripted-models/seeded';
import { screenOf, taskResolver } from '../scripted-models/task-resolver';
import { TRAINER_TOKEN_ENV } from '../../activities/training/reward-service';
import { parseArgs, UsageError, type ArgSpec, type ArgValue } from './argparse';
import { checkArrowTypes, imageSize, InputError, runTrainerDouble, stepDelayMs, writeModelFolder } from './checks';
import { RewardClient, type RewardAnswer } from './openrlhf-reward-client';
import { pyDict, type PyValue } from './python-repr';
import { applyChatTemplate, END_OF_TURN, expandImagePads, type TemplateMessage } from './qwen2-vl';

/**
 * TEST DOUBLE of OpenRLHF's GRPO trainer: `node build/doubles/trainers/openrlhf.js <the flags of
 * python -m openrlhf.cli.train_ppo_ray>`, standing for infra/trainers/openrlhf_grpo.py, which runs
 * train_ppo_ray with the reward service's token taken from CODA_REWARD_TOKEN (never from the command line). No GPU and no weights exist here, so its policy is the
 * learning planner double (doubles/learning-planner/): logits over candidate thoughts per
 * situation, starting from those saved in `--actor.model_name_or_path` (a folder with the policy
 * file) or from the base planner's (dev.scriptedModels.errorRate of the temporal.yaml in
 * $CODA_CONFIG). For each prompt row it samples `--rollout.n_samples_per_prompt` thoughts from its
 * current policy, gets each one's reward from the reward service over HTTP, normalises the rewards
 * within the group (group_norm, GRPO's advantage) and takes `--train.max_epochs` policy-gradient
 * steps on the logits per global step, with the learning rate `--actor.adam.lr` times
 * LOGIT_STEP_PER_LR. The policy loss and KL it reports are those of that policy; the logits go into
 * every checkpoint (the model states) and model folder it saves, beside placeholder weights.
 *
 * Checked against OpenRLHF 0.11.2 (the wheel `pip install "openrlhf==0.11.*"` installs; first read at
 * tag v0.11.0, commit 3c3be62, then the 0.11.1 and 0.11.2 wheels compared file by file), and run side
 * by side with 0.11.2's own rollout, reward, advantage and replay-buffer code on the same reward
 * service answers (test/training/real-openrlhf.test.ts, infra/trainers/openrlhf_probe.py):
 * - the command line of openrlhf/cli/train_ppo_ray.py (every option of 0.11.2 and its type, among
 *   them is_correction_level/mode/gating, a threshold of one or two floats, loss_agg_mode,
 *   kl.unbiased_gradient and the flash_reinforce estimator; unknown options fail with argparse's
 *   exit 2) and its checks after parsing (group estimators need more than one
 *   sample per prompt, VLM runs refuse a critic and packing, enough samples for the actor GPUs,
 *   colocated engines matching the actor GPUs);
 * - the prompt data as openrlhf/datasets/prompts_dataset.py reads it through HF datasets: a .json
 *   or .jsonl file whose fields keep one type across rows (Arrow), `--data.input_key` chat messages
 *   templated with the tokenizer's chat template (Qwen2-VL's, doubles/trainers/qwen2-vl.ts),
 *   `--data.label_key` a string, `--data.image_key` image files that open, as many as the prompt's
 *   image items and at most `--data.max_images_per_prompt` (vLLM's limit). It also checks that each
 *   label is a CODA GRPO label, which the real trainer does not: the reward service would score
 *   every sample of a bad row 0;
 * - generation and rewards as openrlhf/utils/agent.py's SingleTurnAgentExecutor and
 *   samples_generator.py do them: `--rollout.n_samples_per_prompt` samples per prompt, one reward
 *   request per sample, rotating over the reward URLs (doubles/trainers/openrlhf-reward-client.ts; one
 *   engine's rotation: the real trainer keeps one per vLLM engine), a missing reward failing the
 *   run; `--rollout.batch_size` prompts per global step; a micro batch (`--rollout.micro_batch_size`)
 *   whose answers do not all carry the same extra_logs names fails as the replay buffer's split does
 *   (ValueError: Size of info[name] (k) does not match batch_size (m)), and a non-numeric log value
 *   as torch.tensor does;
 * - progress as ppo_trainer.py logs it: `✨ Global step N: {...}` (a Python dict) behind Ray's
 *   `(PPOTrainer pid=...)` prefix, with the mean of every extra_logs name among the actor's entries
 *   (ppo_actor.py reports each info entry) and rollout/reward_mean and rollout/reward_std as
 *   ppo_trainer.py's _compute_rollout_stats computes them (the real test compares those with 0.11.2's);
 * - checkpoints as ppo_actor.py / utils/deepspeed/deepspeed.py save them every `--ckpt.save_steps`:
 *   `{ckpt.path}/_actor/global_stepN/` with the client state (episode, global step, consumed
 *   prompts), then `_actor/latest` naming it, at most `--ckpt.max_num` kept, and
 *   `{ckpt.path}/global_stepN_hf/` with `--ckpt.save_hf`; `--ckpt.load_enable` resumes from the
 *   latest; the final model goes to `--ckpt.output_dir` (a LoRA adapter with `--ds.lora.rank`).
 * CODA_TRAINER_DOUBLE_STEP_MS adds that much time to each step (tests use it to act mid-training).
 */

const PROG = 'train_ppo_ray.py';

const words = (list: string): string[] => list.trim().split(/\s+/);
const INTS = words(`ref.num_nodes ref.num_gpus_per_node reward.num_nodes reward.num_gpus_per_node actor.num_nodes actor.num_gpus_per_node
  critic.num_nodes critic.num_gpus_per_node vllm.num_engines vllm.tensor_parallel_size train.async_queue_size eval.steps ckpt.save_steps
  logger.logging_steps ckpt.max_num local_rank ds.zero_stage ds.zpg data.dataloader_num_workers ds.tensor_parallel_size rollout.max_tokens_per_gpu
  train.max_tokens_per_gpu ds.lora.rank ds.lora.alpha train.num_episodes rollout.batch_size rollout.vllm_generate_batch_size rollout.micro_batch_size
  train.max_epochs data.max_len rollout.max_new_tokens data.max_samples train.micro_batch_size train.batch_size train.seed critic.freezing_steps
  rollout.n_samples_per_prompt algo.kl.horizon actor.muon.ns_steps critic.muon.ns_steps ds.ring_attn_size ds.ring_attn_head_stride
  eval.n_samples_per_prompt data.max_images_per_prompt`);
const FLAGS = words(`train.colocate_actor_ref train.colocate_critic_reward train.colocate_all vllm.sync_with_ray vllm.enable_prefix_caching
  vllm.enforce_eager vllm.enable_sleep algo.kl.unbiased_gradient train.async_enable train.partial_rollout_enable ckpt.save_hf ckpt.disable_ds
  ckpt.load_enable ds.use_universal_ckpt actor.gradient_checkpointing_enable ds.deepcompile train.enable_ema ds.adam_offload ds.use_liger_kernel
  ds.overlap_comm actor.gradient_checkpointing_reentrant data.disable_fast_tokenizer ds.enable_sleep ds.packing_samples train.dynamic_batch_enable
  ds.load_in_4bit reward.normalize_enable train.full_determinism_enable critic.save_value_network actor.muon.nesterov critic.muon.nesterov
  actor.muon.no_nesterov critic.muon.no_nesterov algo.kl.use_loss algo.advantage.no_std_norm ref.offload reward.offload data.apply_chat_template
  algo.dynamic_filtering_enable actor.freeze_visual_encoder use_ms`);
const STRINGS = words(`vllm.sync_backend algo.advantage.is_correction_level algo.advantage.is_correction_mode algo.advantage.is_correction_gating actor.loss_agg_mode ckpt.path ckpt.best_metric_key ds.param_dtype ds.attn_implementation
  ds.experts_implementation ds.grad_accum_dtype ckpt.output_dir actor.policy_loss_type algo.kl.estimator actor.optim critic.optim actor.lr_scheduler
  critic.lr_scheduler algo.advantage.estimator actor.model_name_or_path reward.model_name_or_path reward.remote_url critic.model_name_or_path
  ds.value_head_prefix train.agent_func_path data.prompt_dataset data.prompt_probs data.prompt_split eval.dataset eval.split data.input_key
  data.label_key data.input_template logger.wandb.key logger.wandb.org logger.wandb.group logger.wandb.project logger.wandb.run_name data.image_key
  logger.tensorboard_dir`);
const FLOATS = words(`vllm.gpu_memory_utilization ckpt.max_mem train.ema_beta ds.lora.dropout actor.eps_clip actor.dual_clip critic.value_clip
  algo.advantage.lambd algo.advantage.gamma rollout.top_p rollout.temperature algo.kl.target algo.kl.init_coef actor.aux_loss_coef actor.entropy_coef
  actor.muon.lr critic.muon.lr actor.muon.momentum critic.muon.momentum actor.adam.lr critic.adam.lr actor.adam.eps critic.adam.eps
  actor.adam.weight_decay critic.adam.weight_decay actor.lr_warmup_ratio critic.lr_warmup_ratio actor.min_lr_ratio critic.min_lr_ratio actor.max_norm
  critic.max_norm reward.overlong_buffer_len reward.overlong_penalty_factor reward.stop_properly_penalty_coef eval.temperature`);
const FLOAT_PAIRS = words('actor.eps_clip_low_high reward.clip_range actor.adam.betas critic.adam.betas algo.dynamic_filtering_range');
const CHOICES: Readonly<Record<string, readonly string[]>> = {
  'algo.advantage.is_correction_level': ['off', 'token', 'seq'],
  'algo.advantage.is_correction_mode': ['mask', 'clip'],
  'algo.advantage.is_correction_gating': ['ratio', 'binary_kl', 'tv'],
  'actor.loss_agg_mode': ['token-mean', 'seq-mean-token-mean'],
  'ds.param_dtype': ['bf16', 'fp16'],
  'ds.experts_implementation': ['eager', 'batched_mm', 'grouped_mm', 'deepgemm'],
  'actor.policy_loss_type': ['ppo', 'gspo'],
  'algo.kl.estimator': ['k1', 'k2', 'k3'],
  'actor.optim': ['adam', 'muon'],
  'critic.optim': ['adam', 'muon'],
  'algo.advantage.estimator': ['gae', 'reinforce', 'rloo', 'reinforce_baseline', 'group_norm', 'dr_grpo', 'flash_reinforce'],
};
const OPTIONS: Record<string, ArgSpec> = Object.fromEntries([
  ...INTS.map((n) => [n, { kind: 'int' }]),
  ...FLAGS.map((n) => [n, { kind: 'flag' }]),
  ...STRINGS.map((n) => [n, CHOICES[n] === undefined ? { kind: 'str' } : { kind: 'str', choices: CHOICES[n] }]),
  ...FLOATS.map((n) => [n, { kind: 'float' }]),
  ...FLOAT_PAIRS.map((n) => [n, { kind: 'float2' }]),
  ['ds.lora.target_modules', { kind: 'str*' }],
  ['algo.advantage.is_correction_threshold', { kind: 'float+' }],
]);

/** train_ppo_ray.py's defaults for the options the double reads. */
const DEFAULTS: Readonly<Record<string, ArgValue>> = {
  'actor.num_nodes': 1,
  'actor.num_gpus_per_node': 8,
  'ds.ring_attn_size': 1,
  'ds.tensor_parallel_size': 1,
  'vllm.tensor_parallel_size': 1,
  'rollout.micro_batch_size': 1,
  'rollout.batch_size': 1024,
  'rollout.n_samples_per_prompt': 1,
  'rollout.temperature': 1,
  'train.num_episodes': 1,
  'ckpt.save_steps': -1,
  'ckpt.path': './ckpt/checkpoints_ppo_ray',
  'ckpt.output_dir': './ckpt',
  'ckpt.max_num': 3,
  'data.input_key': 'input',
  'data.image_key': 'images',
  'data.max_images_per_prompt': 0,
  'algo.advantage.estimator': 'gae',
  'ds.lora.rank': 0,
  'ds.lora.alpha': 16,
  'actor.adam.lr': 1e-6,
  'train.max_epochs': 1,
  'train.seed': 42,
};

/**
 * How far the double's logits move per unit of `--actor.adam.lr`: OpenRLHF's learning rates (1e-6
 * in temporal.yaml) are sized for billions of weights; at them the double's two logits per
 * situation move by steps of about 10 times the mean advantage-weighted gradient.
 */
export const LOGIT_STEP_PER_LR = 1e7;

type Args = ReadonlyMap<string, ArgValue>;
const get = <T extends ArgValue>(args: Args, name: string): T | undefined => (args.get(name) ?? DEFAULTS[name]) as T | undefined;
const num = (args: Args, name: string): number => get<number>(args, name) as number;

/** train_ppo_ray.py's assertions after parsing. */
function checkArgs(args: Args): void {
  const assert = (ok: boolean, message: string): void => {
    if (!ok) throw new InputError(`AssertionError: ${message}`);
  };
  const threshold = args.get('algo.advantage.is_correction_threshold') as number[] | undefined;
  assert(threshold === undefined || threshold.length <= 2, '--algo.advantage.is_correction_threshold takes HIGH or LOW HIGH');
  const estimator = get<string>(args, 'algo.advantage.estimator') as string;
  if (['rloo', 'reinforce_baseline', 'group_norm', 'dr_grpo'].includes(estimator)) assert(num(args, 'rollout.n_samples_per_prompt') > 1, `${estimator} requires n_samples_per_prompt > 1`);
  if (num(args, 'data.max_images_per_prompt') > 0) {
    // With gae a critic is always made (from the reward model or the actor).
    assert(estimator !== 'gae', "VLM training does not support critic model. Use --advantage_estimator other than 'gae' (e.g., reinforce_baseline, rloo, group_norm).");
    assert(!args.get('ds.packing_samples'), 'VLM training does not support --packing_samples.');
  }
  const engines = get<number>(args, 'vllm.num_engines');
  if (args.get('train.colocate_all') && engines !== undefined && engines > 0 && !args.get('train.async_enable')) {
    const actorGpus = num(args, 'actor.num_nodes') * num(args, 'actor.num_gpus_per_node');
    assert(actorGpus === engines * num(args, 'vllm.tensor_parallel_size'), `actor_num_nodes * actor_num_gpus_per_node must be equal to vllm_num_engines * vllm_tensor_parallel_size, got ${actorGpus} and ${engines * num(args, 'vllm.tensor_parallel_size')}`);
  }
  const batches = Math.floor((num(args, 'rollout.n_samples_per_prompt') * num(args, 'rollout.batch_size')) / num(args, 'rollout.micro_batch_size'));
  const processes = Math.floor((num(args, 'actor.num_nodes') * num(args, 'actor.num_gpus_per_node')) / num(args, 'ds.ring_attn_size') / num(args, 'ds.tensor_parallel_size'));
  assert(batches >= processes, 'The number of sample batches must be greater than or equal to the effective number of actor processes.');
  if (get(args, 'actor.model_name_or_path') === undefined) throw new InputError('--actor.model_name_or_path is required (the model to train)');
  if (get(args, 'data.prompt_dataset') === undefined) throw new InputError('--data.prompt_dataset is required');
  if (get(args, 'reward.remote_url') === undefined) throw new InputError('the double scores samples only through --reward.remote_url (no reward model runs here)');
}

interface Prompt {
  /** What its samples' draws are keyed by: its text and label, and which repeat of them it is in the file. */
  readonly key: string;
  readonly templated: string;
  /** Each message's text, parts joined with nothing (what the planner double reads). */
  readonly texts: string[];
  readonly images: Array<{ readonly path: string; readonly size: Size }>;
  readonly label: string;
}

/**
 * --reward.remote_url's URLs, which carry no credentials: the real program (infra/trainers/openrlhf_grpo.py)
 * refuses a URL with them, as every local user reads a command line, with argparse's exit 2.
 */
function rewardUrls(args: Args): string[] {
  const urls = (get<string>(args, 'reward.remote_url') as string).split(',');
  for (const url of urls) {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (parsed !== undefined && (parsed.username !== '' || parsed.password !== '')) {
      throw new UsageError(PROG, `--reward.remote_url ${parsed.protocol}//${parsed.host}${parsed.pathname}: the URL carries credentials, which every user of this machine reads on the command line (ps); give the URL without them and the token in ${TRAINER_TOKEN_ENV}`);
    }
  }
  return urls;
}

/** The reward service's token, from the environment as the real launcher takes it (infra/trainers/reward_token.py). */
const rewardToken = (): { token?: string } => {
  const token = process.env[TRAINER_TOKEN_ENV];
  return token === undefined || token === '' ? {} : { token };
};

function rowsOf(file: string): unknown[] {
  if (!existsSync(file)) throw new InputError(`--data.prompt_dataset ${file}: no such file (the double reads .json and .jsonl files)`);
  const content = readFileSync(file, 'utf8');
  if (file.endsWith('.jsonl')) {
    return content.split('\n').flatMap((line, i) => {
      if (line.trim() === '') return [];
      try {
        return [JSON.parse(line) as unknown];
      } catch {
        throw new InputError(`${file}: JSON parse error in line ${i + 1}`);
      }
    });
  }
  if (!file.endsWith('.json')) throw new InputError(`--data.prompt_dataset ${file}: the double reads .json and .jsonl files`);
  const parsed: unknown = JSON.parse(content);
  if (!Array.isArray(parsed)) throw new InputError(`${file}: expected a JSON list of rows`);
  return parsed;
}

/** The prompt dataset as OpenRLHF's PromptDataset and the VLM processor would take it, or the first thing they would fail on. */
async function readPrompts(args: Args): Promise<Prompt[]> {
  const file = get<string>(args, 'data.prompt_dataset') as string;
  const rows = rowsOf(file);
  if (rows.length === 0) throw new InputError(`${file}: no rows`);
  checkArrowTypes(rows, file);
  const inputKey = get<string>(args, 'data.input_key') as string;
  const labelKey = get<string>(args, 'data.label_key');
  const imageKey = get<string>(args, 'data.image_key') as string;
  const maxImages = num(args, 'data.max_images_per_prompt');
  const prompts: Prompt[] = [];
  const repeats = new Map<string, number>();
  for (const [i, raw] of rows.entries()) {
    const where = `${file} row ${i}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InputError(`${where}: expected a JSON object`);
    const row = raw as Record<string, unknown>;
    const chat = row[inputKey];
    if (!Array.isArray(chat)) throw new InputError(`${where}: --data.input_key ${inputKey}: expected a list of chat messages (KeyError or a plain prompt otherwise)`);
    if (!args.get('data.apply_chat_template')) throw new InputError(`${where}: ${inputKey} holds chat messages: pass --data.apply_chat_template`);
    const messages = chat.map((m, j) => messageOf(m, `${where}: ${inputKey}[${j}]`));
    const label = labelKey === undefined ? '' : row[labelKey];
    if (typeof label !== 'string') throw new InputError(`${where}: --data.label_key ${labelKey}: expected a string label`);
    if (labelKey !== undefined) checkCodaLabel(label, where);
    const paths = row[imageKey] ?? [];
    if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string')) throw new InputError(`${where}: --data.image_key ${imageKey}: expected a list of image paths`);
    const items = messages.reduce((n, m) => n + (typeof m.content === 'string' ? 0 : m.content.filter((p) => p.type === 'image').length), 0);
    if (items !== paths.length) throw new InputError(`${where}: Image features and image tokens do not match: tokens: ${items}, features ${paths.length}`);
    if (paths.length > maxImages) throw new InputError(`${where}: At most ${maxImages} image(s) may be provided in one prompt (--data.max_images_per_prompt).`);
    const images: Prompt['images'][number][] = [];
    for (const p of paths as string[]) images.push({ path: path.resolve(p), size: await imageSize(p, where) });
    const texts = messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('')));
    const templated = applyChatTemplate(messages);
    const content = `${hashText(templated)} ${hashText(label)}`;
    repeats.set(content, (repeats.get(content) ?? 0) + 1);
    prompts.push({ key: `${content} ${repeats.get(content)}`, templated, texts, images, label });
  }
  return prompts;
}

function messageOf(raw: unknown, where: string): TemplateMessage {
  const m = raw as { role?: unknown; content?: unknown } | null;
  if (typeof m !== 'object' || m === null || !['system', 'user', 'assistant'].includes(String(m.role))) throw new InputError(`${where}: expected a message with role system, user or assistant`);
  if (typeof m.content === 'string') return { role: String(m.role), content: m.content };
  if (!Array.isArray(m.content)) throw new InputError(`${where}.content: expected a string or a list of parts`);
  for (const [k, part] of (m.content as Array<Record<string, unknown>>).entries()) {
    if (part?.type === 'text' ? typeof part.text !== 'string' : part?.type !== 'image') throw new InputError(`${where}.content[${k}]: expected {"type": "text", "text": ...} or {"type": "image"}`);
  }
  return { role: String(m.role), content: m.content as TemplateMessage['content'] };
}

function checkCodaLabel(label: string, where: string): void {
  const parsed = parseGrpoLabel(label);
  if (typeof parsed === 'string') throw new InputError(`${where}: not a CODA GRPO label (${parsed}): the reward service would score every sample of this row 0`);
}

interface ClientState {
  readonly episode: number;
  readonly global_step: number;
  readonly total_consumed_prompts: number;
}

/** What a DeepSpeed checkpoint of the double holds: the client state, and the policy's logits (the model states). */
interface SavedState {
  readonly client_state: ClientState;
  readonly policy?: unknown;
}

const MODEL_STATES = 'mp_rank_00_model_states.pt';

/** The client state of the latest DeepSpeed checkpoint under `{ckpt.path}/_actor`, as --ckpt.load_enable loads it. */
function loadCheckpoint(actorDir: string): SavedState | undefined {
  const latest = path.join(actorDir, 'latest');
  if (!existsSync(latest)) {
    log(`Warning: [deepspeed] No checkpoint found at ${actorDir}, skipping checkpoint loading.`);
    return undefined;
  }
  const tag = readFileSync(latest, 'utf8').trim();
  const state = JSON.parse(readFileSync(path.join(actorDir, tag, MODEL_STATES), 'utf8')) as SavedState;
  log(`Loading the checkpoint: ${actorDir}`);
  return state;
}

function saveCheckpoint(args: Args, state: ClientState, policy: LearningPolicy): void {
  const ckpt = get<string>(args, 'ckpt.path') as string;
  const tag = `global_step${state.global_step}`;
  const actorDir = path.join(ckpt, '_actor');
  mkdirSync(actorDir, { recursive: true });
  const kept = readdirSync(actorDir)
    .filter((d) => /^global_step\d+$/.test(d) && statSync(path.join(actorDir, d)).isDirectory())
    .sort((a, b) => Number(a.slice(11)) - Number(b.slice(11)));
  while (kept.length > 0 && kept.length >= num(args, 'ckpt.max_num')) {
    const oldest = path.join(actorDir, kept.shift() as string);
    rmSync(oldest, { recursive: true, force: true });
    log(`Deleted checkpoint ${oldest} (no metric (oldest))`);
  }
  const dir = path.join(actorDir, tag);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, MODEL_STATES), JSON.stringify({ double: 'TEST DOUBLE: the learning planner double\'s logits', client_state: state, policy: policy.toJSON() }));
  writeFileSync(path.join(dir, 'zero_pp_rank_0_mp_rank_00_optim_states.pt'), 'TEST DOUBLE: no optimizer state');
  writeFileSync(path.join(actorDir, 'latest'), tag);
  if (args.get('ckpt.save_hf')) writeModelFolder(path.join(ckpt, `${tag}_hf`), modelOptions(args, state.global_step), policy);
}

const modelOptions = (args: Args, step: number) => ({
  trainer: 'openrlhf',
  base: get<string>(args, 'actor.model_name_or_path') as string,
  loraRank: num(args, 'ds.lora.rank'),
  loraAlpha: num(args, 'ds.lora.alpha'),
  step,
});

const stamp = (): string => new Date().toISOString().replace(/^\d{4}-(\d\d)-(\d\d)T(\d\d:\d\d:\d\d).*$/, '$1-$2 $3');
/** A line of the trainer actor's log as the Ray driver prints it. */
const log = (message: string, file = 'ppo_trainer.py:547'): void => {
  process.stdout.write(`(PPOTrainer pid=${process.pid}) INFO ${stamp()} ${file}] ${message}\n`);
};

/** The policy training starts from: the logits saved in the actor's folder, or the base planner's. */
function startingPolicy(args: Args, errorRate: number): LearningPolicy {
  const model = get<string>(args, 'actor.model_name_or_path') as string;
  return (existsSync(model) ? LearningPolicy.read(model) : undefined) ?? LearningPolicy.base(errorRate);
}

async function main(): Promise<void> {
  const args = parseArgs(PROG, OPTIONS, process.argv.slice(2));
  checkArgs(args);
  const config = loadConfig();
  log(`TEST DOUBLE of OpenRLHF ${PROG} (doubles/trainers/openrlhf.ts): the learning planner double's logits, trained by policy gradient`, 'train_ppo_ray.py:1');
  const prompts = await readPrompts(args);
  const resolver = taskResolver();
  const screen = screenOf(config);
  const readings = prompts.map((p) => readPrompt(p.texts, (instruction, software) => resolver.taskOf(instruction, software), screen));
  // One vLLM engine's executor: its rotation over the reward URLs lasts the whole run.
  const client = new RewardClient(rewardUrls(args), rewardToken());
  const n = num(args, 'rollout.n_samples_per_prompt');
  const batchSize = num(args, 'rollout.batch_size');
  const episodes = num(args, 'train.num_episodes');
  const saveSteps = num(args, 'ckpt.save_steps');
  const stepSize = num(args, 'actor.adam.lr') * LOGIT_STEP_PER_LR;
  const actorDir = path.join(get<string>(args, 'ckpt.path') as string, '_actor');
  const initial = startingPolicy(args, config.dev.scriptedModels?.errorRate ?? 0);
  const resumed = args.get('ckpt.load_enable') && existsSync(actorDir) ? loadCheckpoint(actorDir) : undefined;
  if (resumed !== undefined) {
    const s = resumed.client_state;
    log(`checkpoint_states: ${pyDict({ episode: { int: s.episode }, global_step: { int: s.global_step }, total_consumed_prompts: { int: s.total_consumed_prompts } })}`);
  }
  const policy = resumed?.policy === undefined ? startingPolicy(args, initial.errorRate) : LearningPolicy.fromJSON(resumed.policy, `${actorDir} model states`);
  let state: ClientState = resumed?.client_state ?? { episode: 0, global_step: 0, total_consumed_prompts: 0 };
  // Each sample's draw is keyed by the run seed, --train.seed, the job (its folder: the round), the
  // episode, the prompt and the sample's index: a resumed run samples as an uninterrupted one would,
  // whatever order the prompts' rewards come back in.
  const job = path.basename(path.dirname(path.resolve(get<string>(args, 'ckpt.path') as string)));
  const drawsOf = (episode: number, prompt: Prompt) => (sample: number) =>
    keyedRandom(config.dev.scriptedModels?.seed ?? 1, 'grpo', num(args, 'train.seed'), job, episode, prompt.key, sample);

  for (let episode = state.episode; episode < episodes; episode++) {
    for (let start = state.total_consumed_prompts - episode * prompts.length; start < prompts.length; start += batchSize) {
      const began = Date.now();
      const batch = prompts.slice(start, start + batchSize);
      const groups = await Promise.all(batch.map((prompt, i) => rollout(client, prompt, readings[start + i] as Reading, policy, n, drawsOf(episode, prompt))));
      await sleep(stepDelayMs());
      const samples = groups.flatMap((g) => g.samples);
      const microBatch = num(args, 'rollout.micro_batch_size');
      for (let i = 0; i < samples.length; i += microBatch) checkMicroBatch(samples.slice(i, i + microBatch));
      const rewards = samples.map((s) => s.reward);
      const advantages = groups.flatMap((g) => groupAdvantages(g.samples.map((s) => s.reward)));
      const choices: Choice[] = samples.flatMap((s, i) => (s.choice === undefined ? [] : [{ ...s.choice, weight: advantages[i] as number }]));
      let objective = 0;
      for (let epoch = 0; epoch < num(args, 'train.max_epochs'); epoch++) objective = policy.step(choices, stepSize);
      // The actor's fit reports the mean of every info entry, the reward service's extra_logs among them.
      const logMeans = Object.fromEntries((samples[0]?.logNames ?? []).map((name) => [name, samples.reduce((a, s) => a + (s.logs[name] ?? 0), 0) / samples.length]));
      const { 'rollout/reward_mean': mean, 'rollout/reward_std': std } = rolloutRewardStats(rewards);
      state = { episode, global_step: state.global_step + 1, total_consumed_prompts: state.total_consumed_prompts + batch.length };
      const status: Record<string, PyValue> = {
        policy_loss: -objective,
        actor_lr: get<number>(args, 'actor.adam.lr') as number,
        kl: policy.klFrom(initial),
        reward: mean,
        ...logMeans,
        response_length: groups.reduce((a, g) => a + g.length, 0) / rewards.length,
        'timing/generation': (Date.now() - began) / 1000,
        'rollout/reward_mean': mean,
        'rollout/reward_std': std,
        'rollout/num_samples': rewards.length,
      };
      log(`✨ Global step ${state.global_step}: ${pyDict(status)}`);
      if (saveSteps > 0 && state.global_step % saveSteps === 0) saveCheckpoint(args, state, policy);
    }
  }
  writeModelFolder(get<string>(args, 'ckpt.output_dir') as string, modelOptions(args, state.global_step), policy);
  log(`Saved the final model to ${get<string>(args, 'ckpt.output_dir')} (TEST DOUBLE: placeholder weights and the policy's logits)`, 'ppo_actor.py:700');
}

/** ppo_trainer.py's _compute_rollout_stats of a step's rewards: their mean and torch's (unbiased) std, 0 for one sample. */
export function rolloutRewardStats(rewards: readonly number[]): { 'rollout/reward_mean': number; 'rollout/reward_std': number } {
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const std = rewards.length > 1 ? Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (rewards.length - 1)) : 0;
  return { 'rollout/reward_mean': mean, 'rollout/reward_std': std };
}

interface Sample {
  readonly reward: number;
  /** The extra_logs names of its answer, in their order. */
  readonly logNames: readonly string[];
  readonly logs: Readonly<Record<string, number>>;
  /** The situation and candidate the policy chose, when the prompt offered a choice. */
  readonly choice?: { readonly key: string; readonly candidate: number };
}

/** n samples of one prompt from the policy, each scored by the reward service as OpenRLHF 0.11.2 requests it. */
async function rollout(client: RewardClient, prompt: Prompt, reading: Reading, policy: LearningPolicy, n: number, randomOf: (sample: number) => () => number): Promise<{ samples: Sample[]; length: number }> {
  const drawn = sampleReplies(reading, policy, n, randomOf);
  const prefix = expandImagePads(prompt.templated, prompt.images.map((i) => i.size));
  const samples = await Promise.all(
    drawn.map(async ({ reply, candidate }): Promise<Sample> => {
      let answer: RewardAnswer | undefined;
      try {
        answer = (await client.fetch({ queries: [`${prefix}${reply}${END_OF_TURN}`], prompts: [prompt.templated], labels: [prompt.label] }))[0];
      } catch (err) {
        throw new Error(`a sample's reward is missing (${(err as Error).message}): advantages cannot be computed without it`);
      }
      const reward = Array.isArray(answer?.rewards) ? (answer.rewards as unknown[])[0] : undefined;
      if (typeof reward !== 'number') throw new Error(`the reward service answered no reward for a sample: ${JSON.stringify(answer)}`);
      const logs: Record<string, number> = {};
      for (const [name, values] of Object.entries(answer?.extra_logs ?? {})) {
        const value = Array.isArray(values) ? (values as unknown[])[0] : values;
        if (typeof value !== 'number') throw new Error(`TypeError: extra_logs[${name}]: ${JSON.stringify(values)} is not a number (torch.tensor refuses it)`);
        logs[name] = value;
      }
      const choice = candidate === undefined || 'reply' in reading ? undefined : { key: reading.situation.key, candidate };
      return { reward, logNames: Object.keys(logs), logs, ...(choice === undefined ? {} : { choice }) };
    }),
  );
  return { samples, length: drawn.reduce((a, d) => a + Math.ceil(d.reply.length / 4), 0) };
}

/**
 * What OpenRLHF's replay buffer does with a micro batch's answers: experience.py's _merge_item
 * gathers each extra_logs name over the answers that have it, and split_experience_batch refuses a
 * name with fewer values than samples.
 */
export function checkMicroBatch(samples: ReadonlyArray<Pick<Sample, 'logNames'>>): void {
  const counts = new Map<string, number>();
  for (const s of samples) for (const name of s.logNames) counts.set(name, (counts.get(name) ?? 0) + 1);
  for (const [name, count] of counts) {
    if (count !== samples.length) throw new Error(`ValueError: Size of info[${name}] (${count}) does not match batch_size (${samples.length})`);
  }
}

if (require.main === module) runTrainerDouble(main);
