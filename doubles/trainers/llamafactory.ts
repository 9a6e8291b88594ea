import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../config/load';
import { candidateOf, readPrompt } from '../learning-planner/planner';
import { LearningPolicy, type Choice } from '../learning-planner/policy';
import { screenOf, taskResolver } from '../scripted-models/task-resolver';
import { checkArrowTypes, imageSize, InputError, runTrainerDouble, stepDelayMs, writeModelFolder } from './checks';
import { UsageError } from './argparse';
import { pyJsonDumps, type PyValue } from './python-repr';

/**
 * TEST DOUBLE of LLaMA-Factory's SFT: `node build/doubles/trainers/llamafactory.js train cfg.yaml`,
 * as `llamafactory-cli train cfg.yaml`. No GPU and no weights exist here: it reads and checks its
 * inputs as LLaMA-Factory does, then fits the learning planner double's logits
 * (doubles/learning-planner/) to the rows by maximum likelihood: each row's last assistant turn
 * (the only one trained, mask_history) is a choice of candidate in the situation its prompt shows;
 * every optimizer step is a gradient step on the mean log-likelihood of its batch, at the
 * scheduled learning rate times LOGIT_STEP_PER_LR. It starts from the logits in
 * `adapter_name_or_path` or `model_name_or_path` (a folder with the policy file), else from the
 * base planner's (dev.scriptedModels.errorRate of $CODA_CONFIG). Its loss is the batch's negative
 * log-likelihood; the adapter it saves is a placeholder with the logits and a marker file.
 *
 * Checked against hiyouga/LLaMA-Factory at v0.9.5 (commit 7af9095):
 * - the YAML: keys LLaMA-Factory does not know are refused as its HfArgumentParser refuses them
 *   ("Some keys are not used by the HfArgumentParser"; the list below holds the model, data,
 *   finetuning and training arguments in common use); `stage: sft`, `do_train`, `template:
 *   qwen2_vl` (the only template the double implements), `dataset`, `dataset_dir`, `output_dir`;
 *   `adapter_name_or_path`, adapters that must hold an adapter_config.json;
 * - the data as data/parser.py and data/converter.py read it: `dataset_info.json` in `dataset_dir`
 *   naming each dataset's `file_name`, `formatting: sharegpt`, `columns` and `tags` (tags not given
 *   are unset, so a leading system message needs `system_tag`); rows of `messages` alternating
 *   user and assistant after an optional system message, ending with the assistant; `images`
 *   paths joined to `media_dir` (default `dataset_dir`) that must open; as many `<image>` in the
 *   messages as images (mm_plugin.py's "The number of images does not match..."). LLaMA-Factory
 *   skips a row with bad roles with a warning; the double refuses it, since a dropped row is a bug
 *   in the writer;
 * - progress as train/callbacks.py's LogCallback writes it: `output_dir/trainer_log.jsonl`, one
 *   json.dumps line per `logging_steps` with current_steps, total_steps, loss, lr, epoch,
 *   percentage, elapsed_time, remaining_time, then the end-of-training line without loss and lr;
 * - steps as transformers' Trainer counts them: ceil(batches / gradient_accumulation_steps) per
 *   epoch (the last, shorter accumulation of an epoch is a step), epochs as fractions of batches;
 * - checkpoints as the HF Trainer saves them every `save_steps` and at the last step:
 *   `output_dir/checkpoint-N/` with the adapter, optimizer.pt, scheduler.pt, rng_state.pth,
 *   training_args.bin and trainer_state.json written last, at most `save_total_limit` kept;
 *   `resume_from_checkpoint` (or, as hparams/parser.py does, the last checkpoint-N of an existing
 *   `output_dir`) resumes at its global step; the final adapter goes to `output_dir`.
 * CODA_TRAINER_DOUBLE_STEP_MS adds that much time to each step.
 *
 * Compared with a real run (2026-11-24, docs/real-trainers.md): LLaMA-Factory 0.9.5, transformers
 * 5.6.0, peft 0.18.1, torch 2.11.0 on CPU (`use_cpu: true`, `bf16: false`), the tiny Qwen2.5-VL of
 * infra/trainers/tiny_qwen2_5_vl.py, 13 rows, per_device_train_batch_size 1 x
 * gradient_accumulation_steps 8, 3 epochs, logging_steps 1, save_steps 50: "Total optimization
 * steps = 6" (2 per epoch), trainer_log.jsonl of 6 step lines (epochs 0.615, 1.0, 1.615, 2.0,
 * 2.615, 3.0) and a 7th, the summary, without loss; `checkpoint-6/` with the adapter, optimizer.pt,
 * scheduler.pt, rng_state.pth, training_args.bin, trainer_state.json (and the tokenizer and
 * processor files). The double gives the same steps, epochs, lines and checkpoint names; its
 * learning rate has no warmup (the real one starts at 0 with warmup_ratio).
 */

const KNOWN_KEYS = new Set(
  `model_name_or_path adapter_name_or_path adapter_folder cache_dir use_fast_tokenizer resize_vocab split_special_tokens add_tokens add_special_tokens
  model_revision low_cpu_mem_usage rope_scaling flash_attn shift_attn mixture_of_depths use_unsloth use_unsloth_gc enable_liger_kernel moe_aux_loss_coef
  disable_gradient_checkpointing use_reentrant_gc upcast_layernorm upcast_lmhead_output train_from_scratch infer_backend offload_folder use_cache
  infer_dtype hf_hub_token ms_hub_token om_hub_token print_param_status trust_remote_code image_max_pixels image_min_pixels image_do_pan_and_scan
  crop_to_patches video_max_pixels video_min_pixels video_fps video_maxlen quantization_method quantization_bit quantization_type double_quantization
  quantization_device_map compute_dtype device_map model_max_length block_diag_attn template dataset eval_dataset dataset_dir media_dir cutoff_len
  train_on_prompt mask_history streaming buffer_size mix_strategy interleave_probs overwrite_cache preprocessing_batch_size preprocessing_num_workers
  max_samples eval_num_beams ignore_pad_token_for_loss val_size eval_on_each_dataset packing neat_packing tool_format default_system enable_thinking
  tokenized_path data_shared_file_system stage finetuning_type use_llama_pro use_adam_mini use_muon freeze_vision_tower freeze_multi_modal_projector
  freeze_language_model compute_accuracy disable_shuffling early_stopping_steps plot_loss include_effective_tokens_per_second pure_bf16
  freeze_trainable_layers freeze_trainable_modules freeze_extra_modules additional_target lora_alpha lora_dropout lora_rank lora_target
  loraplus_lr_ratio loraplus_lr_embedding use_rslora use_dora pissa_init pissa_iter pissa_convert create_new_adapter output_dir overwrite_output_dir
  do_train do_eval do_predict eval_strategy prediction_loss_only per_device_train_batch_size per_device_eval_batch_size gradient_accumulation_steps
  eval_accumulation_steps eval_delay learning_rate weight_decay adam_beta1 adam_beta2 adam_epsilon max_grad_norm num_train_epochs max_steps
  lr_scheduler_type lr_scheduler_kwargs warmup_ratio warmup_steps log_level logging_dir logging_strategy logging_first_step logging_steps
  save_strategy save_steps save_total_limit save_only_model save_safetensors seed data_seed bf16 fp16 tf32 local_rank ddp_backend dataloader_drop_last
  eval_steps dataloader_num_workers dataloader_pin_memory dataloader_persistent_workers run_name disable_tqdm remove_unused_columns label_names
  load_best_model_at_end metric_for_best_model greater_is_better ignore_data_skip fsdp fsdp_config deepspeed label_smoothing_factor optim optim_args
  group_by_length report_to ddp_find_unused_parameters ddp_timeout resume_from_checkpoint gradient_checkpointing gradient_checkpointing_kwargs
  include_num_input_tokens_seen neftune_noise_alpha torch_compile predict_with_generate generation_max_length generation_num_beams hub_model_id
  push_to_hub do_sample temperature top_p top_k num_beams max_length max_new_tokens repetition_penalty length_penalty skip_special_tokens`
    .trim()
    .split(/\s+/),
);

type Settings = Record<string, unknown>;
const IMAGE_TOKEN = '<image>';
const TRAINER_LOG = 'trainer_log.jsonl';
const TRAINER_STATE = 'trainer_state.json';

function readSettings(file: string): Settings {
  if (!existsSync(file)) throw new InputError(`${file}: no such file`);
  const settings = parseYaml(readFileSync(file, 'utf8')) as unknown;
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) throw new InputError(`${file}: expected a YAML mapping of arguments`);
  const unknown = Object.keys(settings).filter((key) => !KNOWN_KEYS.has(key));
  if (unknown.length > 0) throw new InputError(`Some keys are not used by the HfArgumentParser: [${unknown.map((k) => `'${k}'`).join(', ')}]`);
  const s = settings as Settings;
  const need = (key: string): unknown => {
    if (s[key] === undefined || s[key] === null || s[key] === '') throw new InputError(`${file}: ${key} is required`);
    return s[key];
  };
  need('model_name_or_path');
  need('dataset');
  need('output_dir');
  if ((s.stage ?? 'sft') !== 'sft') throw new InputError(`${file}: stage ${String(s.stage)}: the double implements stage sft only`);
  if (s.do_train !== true) throw new InputError(`${file}: do_train is not true: nothing to do`);
  if (need('template') !== 'qwen2_vl') throw new InputError(`${file}: template ${String(s.template)}: the double implements qwen2_vl only`);
  return s;
}

interface DatasetAttr {
  readonly file: string;
  readonly messages: string;
  readonly images?: string;
  readonly tags: Readonly<Record<'role_tag' | 'content_tag' | 'user_tag' | 'assistant_tag' | 'system_tag', string | undefined>>;
}

/** data/parser.py: a dataset's entry of dataset_info.json (tags given replace every default; tags not given are unset). */
function datasetAttr(datasetDir: string, name: string): DatasetAttr {
  const infoFile = path.join(datasetDir, 'dataset_info.json');
  let info: Record<string, Record<string, any>>;
  try {
    info = JSON.parse(readFileSync(infoFile, 'utf8')) as Record<string, Record<string, any>>;
  } catch (err) {
    throw new InputError(`Cannot open ${infoFile} due to ${(err as Error).message}.`);
  }
  const entry = info[name];
  if (entry === undefined) throw new InputError(`Undefined dataset ${name} in dataset_info.json.`);
  if (typeof entry.file_name !== 'string') throw new InputError(`dataset_info.json ${name}: the double reads local files (file_name)`);
  if (entry.formatting !== 'sharegpt') throw new InputError(`dataset_info.json ${name}: formatting ${String(entry.formatting ?? 'alpaca')}: the double reads sharegpt`);
  const columns = (entry.columns ?? {}) as Record<string, string>;
  const given = entry.tags as Record<string, string> | undefined;
  const tag = (key: string, fallback: string): string | undefined => (given === undefined ? fallback : given[key]);
  return {
    file: path.join(datasetDir, entry.file_name),
    messages: columns.messages ?? 'conversations',
    ...(columns.images === undefined ? {} : { images: columns.images }),
    tags: {
      role_tag: tag('role_tag', 'from'),
      content_tag: tag('content_tag', 'value'),
      user_tag: tag('user_tag', 'human'),
      assistant_tag: tag('assistant_tag', 'gpt'),
      system_tag: tag('system_tag', 'system'),
    },
  };
}

/** The rows of one ShareGPT dataset as converter.py and mm_plugin.py take them, or the first thing they would fail on. */
/** A row as SFT trains it: the prompt's messages (their text) and the last assistant turn, the target. */
interface Conversation {
  readonly prompt: string[];
  readonly target: string;
}

async function checkRows(attr: DatasetAttr, mediaDir: string): Promise<Conversation[]> {
  if (!existsSync(attr.file)) throw new InputError(`File ${attr.file} not found.`);
  const rows = JSON.parse(readFileSync(attr.file, 'utf8')) as unknown;
  if (!Array.isArray(rows)) throw new InputError(`${attr.file}: expected a JSON list of rows`);
  checkArrowTypes(rows, attr.file);
  const { role_tag: role, content_tag: content, user_tag: user, assistant_tag: assistant, system_tag: system } = attr.tags;
  const conversations: Conversation[] = [];
  for (const [i, raw] of rows.entries()) {
    const where = `${attr.file} row ${i}`;
    const row = raw as Record<string, unknown>;
    const all = row[attr.messages];
    if (!Array.isArray(all) || all.length === 0) throw new InputError(`${where}: ${attr.messages}: expected a list of messages`);
    let messages = all as Array<Record<string, unknown>>;
    if (system !== undefined && role !== undefined && messages[0]?.[role] === system) messages = messages.slice(1);
    for (const [turn, message] of messages.entries()) {
      const expected = turn % 2 === 0 ? user : assistant;
      if (role === undefined || message[role] !== expected) {
        throw new InputError(`${where}: Invalid role tag in message ${turn} (${role === undefined ? 'no role_tag' : `${role} = ${JSON.stringify(message[role])}, expected ${expected}`}): LLaMA-Factory would skip this row`);
      }
      if (content === undefined || typeof message[content] !== 'string') throw new InputError(`${where}: message ${turn} has no ${content ?? 'content_tag'} text`);
    }
    if (messages.length % 2 !== 0) throw new InputError(`${where}: Invalid message count (${messages.length}): LLaMA-Factory would skip this row`);
    const images = attr.images === undefined ? [] : (row[attr.images] ?? []);
    if (!Array.isArray(images)) throw new InputError(`${where}: ${attr.images}: expected a list of image paths`);
    const tokens = (row[attr.messages] as Array<Record<string, string>>).reduce((n, m) => n + String(m[content as string]).split(IMAGE_TOKEN).length - 1, 0);
    if (tokens !== images.length) throw new InputError(`${where}: The number of images does not match the number of ${IMAGE_TOKEN} tokens in the messages (${images.length} images, ${tokens} tokens).`);
    for (const image of images as string[]) {
      const inMedia = path.join(mediaDir, image);
      await imageSize(existsSync(inMedia) ? inMedia : image, where);
    }
    const texts = (all as Array<Record<string, string>>).map((m) => String(m[content as string]));
    conversations.push({ prompt: texts.slice(0, -1), target: texts.at(-1) as string });
  }
  return conversations;
}

/**
 * How far the double's logits move per unit of learning_rate: LLaMA-Factory's rates (1e-5 in
 * temporal.yaml) are sized for billions of weights; at them the double's logits move by about ten
 * times the batch's mean gradient, so a few epochs over a few rows of a situation fit it (SFT
 * sees only the judged successes: few rows per situation).
 */
export const LOGIT_STEP_PER_LR = 1e6;

/** The policy training starts from: the logits of the first adapter or model folder that holds them, or the base planner's. */
function startingPolicy(settings: Settings, errorRate: number): LearningPolicy {
  const folders = [...String(settings.adapter_name_or_path ?? '').split(','), String(settings.model_name_or_path)].filter((f) => f !== '' && existsSync(f));
  for (const folder of folders) {
    const saved = LearningPolicy.read(folder);
    if (saved !== undefined) return saved;
  }
  return LearningPolicy.base(errorRate);
}

interface TrainerState {
  readonly global_step: number;
}

const checkpointsOf = (outputDir: string): number[] =>
  existsSync(outputDir)
    ? readdirSync(outputDir)
        .filter((d) => /^checkpoint-\d+$/.test(d) && statSync(path.join(outputDir, d)).isDirectory())
        .map((d) => Number(d.slice('checkpoint-'.length)))
        .sort((a, b) => a - b)
    : [];

/** hparams/parser.py: an explicit resume_from_checkpoint, else the last checkpoint of an existing output_dir. */
function resumeStep(settings: Settings, outputDir: string): { step: number; from?: string } {
  let from = settings.resume_from_checkpoint as string | undefined;
  if (from === undefined && settings.overwrite_output_dir !== true) {
    const last = checkpointsOf(outputDir).at(-1);
    if (last !== undefined) {
      from = path.join(outputDir, `checkpoint-${last}`);
      console.log(`Resuming training from ${from}.`);
    }
  }
  if (from === undefined) return { step: 0 };
  const stateFile = path.join(from, TRAINER_STATE);
  if (!existsSync(stateFile)) throw new InputError(`Can't find a valid checkpoint at ${from}`);
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as TrainerState;
  console.log(`Continuing training from checkpoint, will skip to saved global_step ${state.global_step}`);
  return { step: state.global_step, from };
}

const clock = (seconds: number): string => {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
};

/** Each row's choice (its index kept: steps take rows in order), undefined for a row that offers none (a FAIL, a malformed reply, a step both plans agree on). */
function choicesOf(conversations: readonly Conversation[], config: ReturnType<typeof loadConfig>): Array<Choice | undefined> {
  const resolver = taskResolver();
  const screen = screenOf(config);
  return conversations.map(({ prompt, target }) => {
    const reading = readPrompt(prompt, (instruction, software) => resolver.taskOf(instruction, software), screen);
    if ('reply' in reading) return undefined;
    const candidate = candidateOf(reading.situation, target);
    return candidate === undefined ? undefined : { key: reading.situation.key, candidate, weight: 1 };
  });
}

/** The rows of every dataset the config names, checked as LLaMA-Factory's loader checks them. */
async function readConversations(settings: Settings): Promise<Conversation[]> {
  const datasetDir = path.resolve(String(settings.dataset_dir ?? 'data'));
  const mediaDir = path.resolve(String(settings.media_dir ?? datasetDir));
  const conversations: Conversation[] = [];
  for (const name of String(settings.dataset).split(',').map((n) => n.trim())) conversations.push(...(await checkRows(datasetAttr(datasetDir, name), mediaDir)));
  return conversations;
}

/** model/adapter.py: the adapters are loaded onto the model before training goes on. */
function checkAdapters(settings: Settings): void {
  if (settings.adapter_name_or_path === undefined) return;
  for (const adapter of String(settings.adapter_name_or_path).split(',')) {
    if (!existsSync(path.join(adapter, 'adapter_config.json'))) throw new InputError(`Can't find 'adapter_config.json' at '${adapter}'`);
  }
  console.log(`Loaded adapter(s): ${String(settings.adapter_name_or_path)}`);
}

/** transformers' Trainer's step arithmetic: one update per `accumulation` batches, the last (shorter) one of an epoch included. */
function scheduleOf(settings: Settings, rows: number) {
  const perDevice = Number(settings.per_device_train_batch_size ?? 8);
  const accumulation = Number(settings.gradient_accumulation_steps ?? 1);
  const batches = Math.ceil(rows / perDevice);
  const perEpoch = Math.max(1, Math.ceil(batches / accumulation));
  const epochs = Number(settings.num_train_epochs ?? 3);
  return {
    batch: perDevice * accumulation,
    perEpoch,
    epochs,
    total: Number(settings.max_steps ?? -1) > 0 ? Number(settings.max_steps) : Math.ceil(perEpoch * epochs),
    /** The Trainer's epoch after `step` updates: whole epochs plus the batches seen in this one. */
    epochAt: (step: number): number => Math.floor((step - 1) / perEpoch) + Math.min((((step - 1) % perEpoch) + 1) * accumulation, batches) / batches,
  };
}

type Schedule = ReturnType<typeof scheduleOf>;
type Lora = Parameters<typeof writeModelFolder>[1];

/** What one run writes to its output folder: the log lines, the history kept for trainer_state.json, checkpoints as the Trainer saves and rotates them. */
class Output {
  readonly history: Array<Record<string, PyValue>> = [];
  readonly started = Date.now();

  constructor(
    readonly dir: string,
    private readonly settings: Settings,
    private readonly lora: Omit<Lora, 'step'>,
    private readonly first: number,
  ) {}

  logLine(entry: Record<string, PyValue>): void {
    appendFileSync(path.join(this.dir, TRAINER_LOG), `${pyJsonDumps(entry)}\n`);
  }

  /** The Trainer logs every logging_steps and at the last step. */
  log(step: number, total: number, figures: { loss: number; lr: number; epoch: number }): void {
    if (step % Number(this.settings.logging_steps ?? 500) !== 0 && step !== total) return;
    const { loss, lr, epoch } = figures;
    const elapsed = (Date.now() - this.started) / 1000;
    this.logLine({
      current_steps: { int: step },
      total_steps: { int: total },
      loss,
      lr,
      epoch,
      percentage: Math.round((step / total) * 10_000) / 100,
      elapsed_time: clock(elapsed),
      remaining_time: clock((elapsed / (step - this.first)) * (total - step)),
    });
    this.history.push({ loss, learning_rate: lr, epoch, step: { int: step } });
    console.log(`{'loss': ${loss.toFixed(4)}, 'learning_rate': ${lr.toExponential(4)}, 'epoch': ${epoch.toFixed(2)}}`);
  }

  /** The Trainer saves every save_steps and at the last step, keeping save_total_limit checkpoints. */
  save(step: number, total: number, epoch: number, policy: LearningPolicy): void {
    if (step % Number(this.settings.save_steps ?? 500) !== 0 && step !== total) return;
    const dir = path.join(this.dir, `checkpoint-${step}`);
    writeModelFolder(dir, { ...this.lora, step }, policy);
    for (const name of ['optimizer.pt', 'scheduler.pt', 'rng_state.pth', 'training_args.bin']) writeFileSync(path.join(dir, name), 'TEST DOUBLE placeholder');
    writeFileSync(path.join(dir, TRAINER_STATE), JSON.stringify({ global_step: step, max_steps: total, epoch, log_history: this.history }, null, 2));
    const keep = this.settings.save_total_limit === undefined ? Number.POSITIVE_INFINITY : Number(this.settings.save_total_limit);
    const saved = checkpointsOf(this.dir);
    while (saved.length > keep) rmSync(path.join(this.dir, `checkpoint-${saved.shift()}`), { recursive: true, force: true });
  }

  /** The Trainer's end-of-training log (LogCallback writes it too, with no loss and no lr), the model and the results. */
  finish(schedule: Schedule, loss: number, policy: LearningPolicy): void {
    const { total } = schedule;
    this.logLine({ current_steps: { int: total }, total_steps: { int: total }, epoch: total === 0 ? 0 : schedule.epochAt(total), percentage: 100, elapsed_time: clock((Date.now() - this.started) / 1000), remaining_time: clock(0) });
    writeModelFolder(this.dir, { ...this.lora, step: total }, policy);
    writeFileSync(path.join(this.dir, TRAINER_STATE), JSON.stringify({ global_step: total, max_steps: total, log_history: this.history }, null, 2));
    const results = { epoch: schedule.epochs, train_loss: loss, train_runtime: (Date.now() - this.started) / 1000 };
    for (const name of ['train_results.json', 'all_results.json']) writeFileSync(path.join(this.dir, name), JSON.stringify(results, null, 2));
  }
}

async function main(): Promise<void> {
  const [command, file, ...rest] = process.argv.slice(2);
  if (command !== 'train' || file === undefined || rest.length > 0) throw new UsageError('llamafactory-cli', 'the double runs `llamafactory-cli train <config.yaml>` only');
  const settings = readSettings(path.resolve(file));
  console.log('TEST DOUBLE of LLaMA-Factory SFT (doubles/trainers/llamafactory.ts): fits the learning planner double\'s logits by maximum likelihood');
  const conversations = await readConversations(settings);
  checkAdapters(settings);
  const schedule = scheduleOf(settings, conversations.length);
  const { batch, perEpoch, total } = schedule;
  const learningRate = Number(settings.learning_rate ?? 5e-5);
  const lora = { trainer: 'llamafactory', base: String(settings.model_name_or_path), loraRank: settings.finetuning_type === 'full' ? 0 : Number(settings.lora_rank ?? 8), loraAlpha: Number(settings.lora_alpha ?? 2 * Number(settings.lora_rank ?? 8)) };
  const outputDir = path.resolve(String(settings.output_dir));
  mkdirSync(outputDir, { recursive: true });
  const resumed = resumeStep(settings, outputDir);
  const config = loadConfig();
  const policy = (resumed.from === undefined ? undefined : LearningPolicy.read(resumed.from)) ?? startingPolicy(settings, config.dev.scriptedModels?.errorRate ?? 0);
  const examples = choicesOf(conversations, config);
  console.log(`***** Running training ***** Num examples = ${conversations.length}, Total train batch size = ${batch}, Total optimization steps = ${total}`);
  const output = new Output(outputDir, settings, lora, resumed.step);
  let loss = Math.log(2);
  for (let step = resumed.step + 1; step <= total; step++) {
    await sleep(stepDelayMs());
    const lr = (learningRate * (1 + Math.cos((Math.PI * step) / total))) / 2;
    // This step's rows: its `accumulation` batches of this epoch (the last step of an epoch has fewer).
    const from = ((step - 1) % perEpoch) * batch;
    const chosen = examples.slice(from, from + batch).flatMap((e) => (e === undefined ? [] : [e]));
    if (chosen.length > 0) loss = -policy.step(chosen, lr * LOGIT_STEP_PER_LR);
    const epoch = schedule.epochAt(step);
    output.log(step, total, { loss, lr, epoch });
    output.save(step, total, epoch, policy);
  }
  output.finish(schedule, loss, policy);
  console.log(`Saving model checkpoint to ${outputDir} (TEST DOUBLE: placeholder adapter)`);
}

if (require.main === module) runTrainerDouble(main);
