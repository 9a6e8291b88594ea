import { z } from 'zod';

/** The schema of temporal.yaml, the one declarative description of a deployment. */

const envVarName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the NAME of an environment variable (letters, digits, _), never the secret itself');

const taskQueueName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected a task queue name (letters, digits, . _ -)');

const port = z.number().int().min(0).max(65535);

const hostPort = z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'expected host:port');

const screen = z.strictObject({
  width: z.number().int().min(320).max(7680),
  height: z.number().int().min(240).max(4320),
});

const imageSize = z.strictObject({
  width: z.number().int().positive(),
  height: z.number().int().positive(),
});

const modelEndpoint = z.strictObject({
  baseUrl: z.url(),
  model: z.string().min(1),
  /** Name of the environment variable holding the API key; omitted for servers without keys (vLLM's default). */
  apiKeyEnv: envVarName.optional(),
  timeoutSeconds: z.number().positive().default(120),
  maxRetries: z.number().int().min(0).max(20).default(4),
  /**
   * The most tokens a reply may have (the request's max_tokens) unless the caller sets its own (the
   * judges: judging.maxTokens). A server on CPU bounds what a planner that writes no end token costs
   * a step: the untrained small planner runs on to the limit.
   */
  maxTokens: z.number().int().min(1).max(32_768).default(1024),
  /** Screenshots are resized to fit this box before they are sent; omitted = native resolution. */
  image: imageSize.optional(),
  /**
   * How images reach the model server: `data`, base64 data URLs inside the request (works
   * everywhere); `url`, presigned S3 URLs the server fetches itself (vLLM does: no image byte then
   * passes through the orchestrator). `url` needs the server to reach storage.endpoint (or
   * storage.presignEndpoint).
   */
  imageTransport: z.enum(['data', 'url']).default('data'),
  temperature: z.number().min(0).max(2).default(0),
});

const judgeEndpoint = modelEndpoint.extend({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected a judge name (letters, digits, . _ -)'),
  /**
   * The most images one request may carry (vLLM's `--limit-mm-per-prompt '{"image": N}'`): a longer
   * trajectory is judged on a subsample of its screens. Omitted: no limit.
   */
  maxImages: z.number().int().min(1).max(1000).optional(),
});

const judgePlan = z
  .strictObject({
    lowResolutionVotes: z.number().int().min(0).max(32),
    highResolutionVotes: z.number().int().min(0).max(32),
    /** Names of `models.judges`; within a resolution the votes rotate through them. */
    judges: z.array(z.string().min(1)).min(1),
    /** A judge's first vote at a resolution is greedy; later ones sample (SEAgent: 0, then 1.0 with top_p 0.6). */
    temperatures: z
      .strictObject({ first: z.number().min(0).max(2), repeat: z.number().min(0).max(2), repeatTopP: z.number().gt(0).max(1) })
      .default({ first: 0, repeat: 1, repeatTopP: 0.6 }),
  })
  .refine((plan) => plan.lowResolutionVotes + plan.highResolutionVotes > 0, 'a judge plan needs at least one vote');

const rate = z.number().min(0).max(1);
const judgeErrors = z.strictObject({ falsePositive: rate, falseNegative: rate });

const verdictLabel = z.string().regex(/^[a-z0-9][a-z0-9-]{0,40}$/, 'expected a label (a-z, 0-9, -)');

const localHost = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a lowercase host id (a-z, 0-9, -)'),
  kind: z.literal('local'),
  taskQueue: taskQueueName,
  /** How many desktops this host runs at once; each is leased to one rollout at a time. */
  desktops: z.number().int().min(1).max(1000),
  screen: screen.default({ width: 1920, height: 1080 }),
  /** First X display number this host uses; desktop i gets displayBase + i. */
  displayBase: z.number().int().min(1).max(60000).default(90),
  /** This host's metrics port, where one machine runs several vm-hosts; default: metrics.ports.vmHost. */
  metricsPort: port.optional(),
});

const osworldVm = z.strictObject({
  /** The in-VM server, e.g. http://10.0.0.5:5000. */
  url: z.url(),
  /** Command that reverts the VM to its task snapshot, e.g. `vmrun revertToSnapshot /vms/a.vmx sci_bench`. */
  resetCommand: z.array(z.string().min(1)).min(1),
  screen: screen.default({ width: 1920, height: 1080 }),
  /**
   * Port of the app's state server inside the VM (ScienceBoard's modified builds, e.g. KAlgebra's
   * /vars), reached on the VM's own address as ScienceBoard does; also what a task's launch
   * command gets in place of «PORTLIKE».
   */
  appStatePort: z.number().int().min(1024).max(65535).default(8000),
});

/**
 * What a task's `download` func may fetch on the host (activities/desktop/osworld/download.ts):
 * public http(s) addresses, and the hosts listed here even where they are not public (a lab's
 * mirror); a larger body is refused.
 */
export const downloadSettings = z.strictObject({
  allowHosts: z.array(z.string().min(1)).default([]),
  maxBytes: z.number().int().min(1).default(64 * 1024 * 1024),
});

const osworldHost = z.strictObject({
  id: localHost.shape.id,
  kind: z.literal('osworld'),
  taskQueue: taskQueueName,
  vms: z.array(osworldVm).min(1),
  /** Longest a VM's resetCommand may run before the reset counts as failed. */
  resetTimeoutSeconds: z.number().positive().default(300),
  /** After a revert, how long the in-VM server may take to answer again (OSWorld waits up to 300 s). */
  readyTimeoutSeconds: z.number().positive().default(300),
  /** ScienceBoard pauses this long before each initialize step so the app can settle. */
  initializePauseSeconds: z.number().min(0).max(60).default(1),
  /** The share of each initialize step's own `wait` that is slept: 1 as ScienceBoard; a test against doubles sets 0. */
  initializeWaitScale: z.number().min(0).max(1).default(1),
  downloads: downloadSettings.prefault({}),
  /**
   * How long each request to a task's app may take: the app's own server (KAlgebra's, Celestia's,
   * GRASS GIS's), and the VM's server on its behalf (ChimeraX's /chimerax/run, /lean/check,
   * /tex/check, a dump's or a checked file's /read). 240 s is ScienceBoard's Manager.HOMO_TIMEOUT.
   */
  appTimeoutSeconds: z.number().positive().max(3600).default(240),
  metricsPort: localHost.shape.metricsPort,
});

/**
 * A host that runs its own VMs with QEMU (activities/desktop/qemu): `vms` VMs from one image
 * through qcow2 overlays of their own, started from the image's memory snapshot and reset by
 * `loadvm` of it; each VM is driven through its in-VM server as an osworld host's VMs are.
 */
const qemuHost = z.strictObject({
  id: localHost.shape.id,
  kind: z.literal('qemu'),
  taskQueue: taskQueueName,
  /** How many VMs this host runs at once; each is leased to one rollout at a time. */
  vms: z.number().int().min(1).max(256),
  /** Each VM's memory (MiB) and virtual CPUs: part of the snapshot, which is taken once per shape. */
  memoryMiB: z.number().int().min(512).max(1_048_576).default(2048),
  cpus: z.number().int().min(1).max(64).default(2),
  /** kvm, tcg (QEMU's emulation), or auto: KVM when a probe boot under it succeeds on this machine (decided once and cached). */
  accelerator: z.enum(['auto', 'kvm', 'tcg']).default('auto'),
  /** `project`: the project's image (infra/vm-image), built into the cache when missing; or a lab's own qcow2 disk with the kernel and initrd it boots. */
  image: z
    .union([z.literal('project'), z.strictObject({ disk: z.string().min(1), kernel: z.string().min(1), initrd: z.string().min(1) })], {
      error: 'expected "project" or { disk, kernel, initrd } (paths of a qcow2 disk and the kernel and initrd it boots)',
    })
    .default('project'),
  screen: screen.default({ width: 1280, height: 800 }),
  /** How long a first boot may take until the in-VM server answers with a settled screen (the snapshot is taken then). */
  bootTimeoutSeconds: z.number().positive().default(900),
  readyTimeoutSeconds: osworldHost.shape.readyTimeoutSeconds,
  initializePauseSeconds: osworldHost.shape.initializePauseSeconds,
  initializeWaitScale: osworldHost.shape.initializeWaitScale,
  downloads: osworldHost.shape.downloads,
  appTimeoutSeconds: osworldHost.shape.appTimeoutSeconds,
  metricsPort: localHost.shape.metricsPort,
});

const host = z.discriminatedUnion('kind', [localHost, osworldHost, qemuHost]);

const localApp = z.strictObject({
  /** ScienceBoard `type` of the tasks this app serves. */
  software: z.string().min(1),
  /** A task's `launch` command maps to this app when it contains this text (e.g. the VM path `/app/bin/kalgebra`). */
  launchMatch: z.string().min(1),
  /** argv of the local binary. */
  command: z.array(z.string().min(1)).min(1),
  env: z.record(z.string(), z.string()).default({}),
  /** Seconds to wait for the app's window before the launch counts as failed. */
  startTimeoutSeconds: z.number().positive().default(30),
  /**
   * ScienceBoard's tasks pause after `initialize` steps (`wait`) because their VMs cannot tell when
   * the app is ready. A local desktop checks each step's result in the accessibility tree, so it
   * honours at most this much of each pause.
   */
  maxStepWaitSeconds: z.number().min(0).max(60).default(0),
});

/** A Temporal duration as people write it: `90 seconds`, `10 minutes`, `1 day`. */
const duration = z.string().regex(/^\d+(\.\d+)?\s*(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?|d|days?)$/, 'expected a duration such as "30 minutes" or "1 day"');

const schedule = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a lowercase schedule id'),
  /** Standard five-field cron expression, UTC. */
  cron: z.string().regex(/^(\S+\s+){4}\S+$/, 'expected a five-field cron expression'),
  workflow: z.string().min(1),
  /** Key of `taskQueues` the scheduled workflow runs on. */
  taskQueue: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
  paused: z.boolean().default(false),
  /** How late a run missed during an outage may still start; older ones are skipped. */
  catchupWindow: duration.default('1 day'),
});

/** Placeholders of the GRPO trainer's arguments, filled by the GPU worker (activities/training/trainer-inputs.ts). */
export const GRPO_PLACEHOLDERS = {
  model: 'the weights training starts from (the base planner, or a parent checkpoint downloaded to the node)',
  prompts: 'the prompt dataset (JSONL) written for this job',
  maxImages: 'the most images one prompt of the dataset carries',
  rewardUrl: "this GPU worker's reward service, without credentials (the token is in the trainer's environment)",
  checkpoints: 'the folder of resumable checkpoints (restored from S3 before a retry)',
  output: 'the folder of the final model',
} as const;

/** Placeholders of the SFT trainer's arguments. */
export const SFT_PLACEHOLDERS = { config: 'the LLaMA-Factory YAML written for this job' } as const;

/** LLaMA-Factory keys the GPU worker writes itself (the job's data, model and folders). */
export const SFT_WORKER_KEYS = ['model_name_or_path', 'adapter_name_or_path', 'stage', 'do_train', 'dataset', 'dataset_dir', 'media_dir', 'output_dir', 'resume_from_checkpoint', 'overwrite_output_dir'] as const;

const PLACEHOLDER = /\{([A-Za-z]+)\}/g;

/** Checks that `args` use only known placeholders and all the required ones (all the known ones unless `optional` names some). */
function checkPlaceholders(args: readonly string[], known: Readonly<Record<string, string>>, ctx: z.core.$RefinementCtx, at: PropertyKey[], optional: readonly string[] = []): void {
  const used = new Set<string>();
  args.forEach((arg, i) => {
    for (const [, name] of arg.matchAll(PLACEHOLDER)) {
      if (name !== undefined && !(name in known)) ctx.addIssue({ code: 'custom', path: [...at, i], message: `unknown placeholder {${name}}: expected one of ${Object.keys(known).map((k) => `{${k}}`).join(', ')}` });
      if (name !== undefined) used.add(name);
    }
  });
  for (const [name, what] of Object.entries(known)) {
    if (!used.has(name) && !optional.includes(name)) ctx.addIssue({ code: 'custom', path: at, message: `{${name}} (${what}) is missing` });
  }
}

const trainerProgram = z.string().regex(/\S/, 'expected the program, words separated by spaces (e.g. `python3 infra/trainers/openrlhf_grpo.py`)');
/** Command-line words; numbers written unquoted in YAML are words too. */
const commandArgs = z.array(z.union([z.string(), z.number()]).transform(String)).min(1);
/** Extra environment of the trainer process (NCCL, Ray, CUDA settings...). */
const trainerEnv = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name'), z.union([z.string(), z.number(), z.boolean()]).transform(String))
  .default({});

/**
 * The GRPO trainers the GPU worker runs (docs/real-trainers.md): OpenRLHF's train_ppo_ray for GPU
 * clusters, or TRL's GRPOTrainer through infra/trainers/trl_grpo.py, which runs on one GPU node or on CPU.
 */
export const GRPO_BACKENDS = ['openrlhf', 'trl'] as const;

const grpoTrainer = z
  .strictObject({
    backend: z.enum(GRPO_BACKENDS, { error: `expected one of ${GRPO_BACKENDS.join(', ')} (the GRPO trainer the command runs)` }).default('openrlhf'),
    program: trainerProgram,
    /** The trainer's command line; `{name}` placeholders are filled per job (GRPO_PLACEHOLDERS). */
    args: commandArgs,
    env: trainerEnv,
  })
  .superRefine((grpo, ctx) => {
    if (grpo.backend === 'trl') {
      // trl_grpo.py always resumes from {checkpoints}; it checks no image limit unless given one.
      checkPlaceholders(grpo.args, GRPO_PLACEHOLDERS, ctx, ['args'], ['maxImages']);
      return;
    }
    checkPlaceholders(grpo.args, GRPO_PLACEHOLDERS, ctx, ['args']);
    // A retry resumes by running the same command again: OpenRLHF loads {checkpoints} only with this flag.
    if (!grpo.args.includes('--ckpt.load_enable')) ctx.addIssue({ code: 'custom', path: ['args'], message: '--ckpt.load_enable is missing: without it a retry starts training over' });
  });

const sftTrainer = z
  .strictObject({
    program: trainerProgram,
    /** LLaMA-Factory's command line, e.g. [train, "{config}"]. */
    args: commandArgs,
    /** LLaMA-Factory YAML keys of every job (template, finetuning_type, learning_rate, ...). */
    config: z.record(z.string(), z.unknown()).default({}),
    env: trainerEnv,
  })
  .superRefine((sft, ctx) => {
    checkPlaceholders(sft.args, SFT_PLACEHOLDERS, ctx, ['args']);
    for (const key of SFT_WORKER_KEYS) {
      if (key in sft.config) ctx.addIssue({ code: 'custom', path: ['config', key], message: 'set by the GPU worker for each job; remove it here' });
    }
  });

const serving = z.discriminatedUnion('kind', [
  z.strictObject({
    /** vLLM runtime LoRA loading on the planner's server (models.planner.baseUrl, VLLM_ALLOW_RUNTIME_LORA_UPDATING). */
    kind: z.literal('lora'),
    /** Where checkpoints are put for the planner server to read (relative to temporal.yaml; the server must see the same path). */
    dir: z.string().min(1),
    timeoutSeconds: z.number().positive().default(120),
  }),
  z.strictObject({
    /** A full checkpoint: run `command` ({path}, {name} filled), then poll `healthUrl` until the new name is served. */
    kind: z.literal('restart'),
    dir: z.string().min(1),
    command: z.array(z.string().min(1)).min(1),
    healthUrl: z.url(),
    timeoutSeconds: z.number().positive().default(900),
  }),
]);

const training = z.strictObject({
  /** The planner a first training starts from: the name rollouts ask for, and its weights on the GPU nodes (an HF id or a path). */
  basePlanner: z.strictObject({ model: z.string().min(1), path: z.string().min(1) }),
  /** Datasets, trainer inputs and checkpoints of running jobs on the GPU node (relative to temporal.yaml). */
  workDir: z.string().min(1).default('.data/gpu'),
  /** Trainings one GPU worker runs at once (each takes the whole node). */
  jobs: z.number().int().min(1).max(16).default(1),
  /** How often a training activity heartbeats its progress. */
  heartbeatSeconds: z.number().positive().default(10),
  /**
   * How long a specialization's training may go without a heartbeat before Temporal counts its GPU
   * worker as dead and retries it on another, which resumes from the last checkpoint uploaded.
   */
  heartbeatTimeoutSeconds: z.number().positive().default(300),
  /** How often the worker looks for a new checkpoint to upload. */
  checkpointPollSeconds: z.number().positive().default(10),
  /** After SIGTERM, how long the trainer's process group may take to exit before SIGKILL. */
  cancelGraceSeconds: z.number().positive().default(30),
  grpo: grpoTrainer,
  sft: sftTrainer,
  /** OpenRLHF's remote reward function, served by every GPU worker on this port. */
  rewardService: z
    .strictObject({
      /**
       * Where it listens: 127.0.0.1 when the trainer runs on this node, the node's address when vLLM
       * engines on other nodes post to it (then only with the token below).
       */
      host: z.string().min(1).default('127.0.0.1'),
      /**
       * The environment variable holding the token a request must carry (HTTP Basic's password, or
       * Bearer): at least 16 of A-Z a-z 0-9 . _ ~ -. The trainer gets it in its environment as
       * CODA_REWARD_TOKEN, never on its command line (docs/security.md). Unset: the service runs open
       * on a loopback host and refuses any other.
       */
      tokenEnv: envVarName.default('CODA_REWARD_TOKEN'),
      port: z.number().int().min(1).max(65535).default(8900),
      /** Executor calls in flight at once. */
      executorConcurrency: z.number().int().min(1).max(1024).default(16),
      /** A sample is answered (reward 0) by then even if the executor has not: OpenRLHF waits 180 s per try. */
      deadlineSeconds: z.number().positive().max(170).default(150),
      /** Scored samples kept for repeated requests. */
      cacheSize: z.number().int().min(0).default(100_000),
      /**
       * Longest query scored, in characters: the decoded prompt and reply (at most --data.max_len
       * plus --rollout.max_new_tokens tokens, one `<|image_pad|>` per vision token); longer is answered 413.
       */
      maxQueryChars: z.number().int().min(1).default(1_048_576),
      /** Largest request body (OpenRLHF posts one sample: its query, prompt and label); larger is answered 413 unread. */
      maxBodyBytes: z.number().int().min(1).default(4 * 1024 * 1024),
      /**
       * Requests in flight at once; one more is answered 503 unread, which OpenRLHF tries again (5 times, 1 s
       * apart). At least the samples a rollout step scores at once per reward URL (--rollout.batch_size × --rollout.n_samples_per_prompt).
       */
      maxConcurrentRequests: z.number().int().min(1).default(256),
    })
    .prefault({}),
  serving,
});

/**
 * A PEM document for Temporal's TLS: a file (relative to temporal.yaml) or the NAME of an
 * environment variable holding the PEM text (a Kubernetes Secret mounted either way). Never the
 * PEM itself.
 */
const pemSource = z
  .strictObject({
    path: z.string().min(1).optional(),
    env: envVarName.optional(),
  })
  .refine((source) => (source.path === undefined) !== (source.env === undefined), 'expected either `path` (a PEM file) or `env` (the NAME of a variable holding the PEM), not both');

/**
 * TLS to Temporal. Present (even `{}`) = connect over TLS; `serverCa` omitted = the system's
 * trusted roots (Temporal Cloud). `clientCert` with `clientKey` = mTLS.
 */
const temporalTls = z
  .strictObject({
    /** The CA that signed the server's certificate (a self-hosted cluster's own CA). */
    serverCa: pemSource.optional(),
    /** This deployment's client certificate, for servers that demand one (mTLS). */
    clientCert: pemSource.optional(),
    clientKey: pemSource.optional(),
    /** The name the server's certificate carries, when the address does not (an IP, a proxy). */
    serverName: z.string().min(1).optional(),
  })
  .superRefine((tls, ctx) => {
    if ((tls.clientCert === undefined) !== (tls.clientKey === undefined)) {
      const missing = tls.clientCert === undefined ? 'clientCert' : 'clientKey';
      ctx.addIssue({ code: 'custom', path: [missing], message: 'clientCert and clientKey go together (mTLS needs both)' });
    }
  });

export type TemporalTls = z.output<typeof temporalTls>;
export type PemSource = z.output<typeof pemSource>;

export const configSchema = z
  .strictObject({
    temporal: z.strictObject({
      address: hostPort,
      namespace: z.string().min(1),
      tls: temporalTls.optional(),
      /** Name of the environment variable holding an API key (Temporal Cloud); implies TLS. */
      apiKeyEnv: envVarName.optional(),
      /** Where people open the Web UI; links printed by the CLI start here. */
      webUi: z.url(),
      searchAttributes: z
        .record(
          z.string().regex(/^[A-Z][A-Za-z0-9]*$/, 'expected a PascalCase attribute name'),
          z.enum(['Keyword', 'Text', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList']),
        )
        .refine((attrs) => Object.keys(attrs).length > 0, 'expected at least one search attribute'),
    }),
    taskQueues: z.strictObject({
      orchestrator: taskQueueName,
      gpu: taskQueueName,
      /** Shared queue every vm-host polls to hand out desktops (the worker-specific queue pattern). */
      desktopLeases: taskQueueName,
    }),
    hosts: z.array(host).min(1),
    localApps: z.array(localApp).default([]),
    models: z.strictObject({
      planner: modelEndpoint,
      executor: modelEndpoint,
      judges: z.array(judgeEndpoint).min(1),
      taskGenerator: modelEndpoint,
    }),
    storage: z.strictObject({
      endpoint: z.url(),
      region: z.string().min(1).default('us-east-1'),
      bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name (3-63 chars, a-z 0-9 . -)'),
      /** Every key this deployment writes starts with this prefix. */
      prefix: z.string().regex(/^([A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*)?$/, 'expected a key prefix like `coda` or `team/coda`'),
      forcePathStyle: z.boolean().default(true),
      /** The S3 address model servers fetch presigned image URLs from, when it is not `endpoint` (e.g. a name inside the cluster). */
      presignEndpoint: z.url().optional(),
      /** How long a presigned image URL stays valid. */
      presignSeconds: z.number().int().min(10).max(604_800).default(900),
      accessKeyIdEnv: envVarName,
      secretAccessKeyEnv: envVarName,
    }),
    rollouts: z
      .strictObject({
        /** After a crashed desktop: replay the recorded actions on a fresh one, or start the task over. */
        resume: z.enum(['replay', 'restart']).default('replay'),
        /** A host activity that stops heartbeating this long is taken for dead. */
        heartbeatTimeoutSeconds: z.number().positive().default(20),
        /** A host queue nobody polls this long is taken for a dead host. */
        hostScheduleToStartSeconds: z.number().positive().default(60),
        /** Malformed model replies tolerated per step before the rollout ends. */
        maxMalformedReplies: z.number().int().min(0).default(2),
        /** Pause after an action before the screenshot, so the app can repaint. */
        settleMs: z.number().int().min(0).default(300),
        /** Desktop losses a rollout survives before it ends with ERROR. */
        maxResumes: z.number().int().min(0).default(5),
        /** Tries of a model call (each already retried by the client) before the rollout ends with ERROR. */
        modelAttempts: z.number().int().min(1).default(6),
      })
      // Left out: every field at its own default.
      .prefault({}),
    limits: z
      .strictObject({
        /** Rollouts a batch keeps in flight at once, on top of the desktop count of the hosts. */
        maxConcurrentRollouts: z.number().int().min(1).max(1000).default(64),
        /** A batch continues-as-new after starting this many rollouts (Temporal allows 2,000 pending children). */
        rolloutsPerBatchRun: z.number().int().min(1).max(1000).default(200),
      })
      .prefault({}),
    judging: z
      .strictObject({
        /** The deployment's judge plan; a run may override it. */
        plan: judgePlan,
        /** The boxes screenshots are fitted into (never enlarged) for low- and high-resolution votes. */
        images: z.strictObject({ low: imageSize, high: imageSize }),
        /** Longest judge reply, in tokens. */
        maxTokens: z.number().int().min(64).max(32_768).default(1024),
        /** Trajectories a judging batch keeps in flight at once. */
        concurrency: z.number().int().min(1).max(1000).default(8),
        /** The strategies `coda judge-eval` compares, by label (the paper's table 2). */
        strategies: z
          .array(z.strictObject({ label: verdictLabel, title: z.string().min(1), plan: judgePlan }))
          .min(1)
          .optional(),
      })
      .superRefine((judging, ctx) => {
        if (judging.images.low.width * judging.images.low.height >= judging.images.high.width * judging.images.high.height) {
          ctx.addIssue({ code: 'custom', path: ['images', 'low'], message: 'expected a smaller box than images.high' });
        }
      }),
    taskGeneration: z
      .strictObject({
        /** Tasks asked for in one request to the task-generator model. */
        tasksPerRequest: z.number().int().min(1).max(200).default(30),
        /** Most tasks a set keeps. */
        maxTasks: z.number().int().min(1).max(10_000).default(60),
        /** Most requests per set: generation stops there even when fewer tasks were kept. */
        maxRequests: z.number().int().min(1).max(100).default(4),
        /** Two instructions at least this alike are the same task (core/task-dedupe.ts). */
        similarityThreshold: z.number().gt(0).max(1).default(0.85),
        /** Step budget of a generated task. */
        maxSteps: z.number().int().min(1).max(100).default(15),
      })
      .prefault({}),
    evaluation: z
      .strictObject({
        /** k of Average@k / Pass@k. */
        attempts: z.number().int().min(1).max(64).default(8),
        /** Series of runs started without one (a report is compared with the series' previous one). */
        series: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'expected a series name (a-z, 0-9, -)').default('manual'),
      })
      .prefault({}),
    training,
    specialization: z
      .strictObject({
        rounds: z.number().int().min(1).max(100).default(2),
        /** Generated tasks per round (a fresh task set each round). */
        tasksPerRound: z.number().int().min(1).max(10_000).default(12),
        /** Rollouts per task per round with the current planner (the trajectories the judge labels). */
        attempts: z.number().int().min(1).max(64).default(2),
        /**
         * Also train on the round's rollouts of the real tasks (its planner's evaluation rollouts). Off by default: the real tasks are the
         * evaluation set, so training on them leaks it into the specialist's figures.
         */
        includeSeeds: z.boolean().default(false),
        /**
         * The lowest precision of the judge's final verdict on the round's real-task rollouts at which
         * the round may train on its data (docs/method.md, "Specialization": CODA's reward rests on the judge); 0: no floor.
         */
        judgePrecisionFloor: z.number().min(0).max(1).default(0.6),
        /** k of the evaluation after each round. */
        evaluationAttempts: z.number().int().min(1).max(64).default(2),
        /**
         * Overlapped rounds: 1 collects round n+1 (tasks, rollouts, judging) with the newest served
         * checkpoint while round n trains, serves and is evaluated; 0 runs the stages in order.
         */
        maxStaleness: z.number().int().min(0).max(1, 'expected 0 or 1 (a staleness of 2 or more is not supported yet)').default(0),
      })
      .prefault({}),
    generalization: z
      .strictObject({
        /** Generated tasks each specialist rolls out on. */
        tasksPerSoftware: z.number().int().min(1).max(10_000).default(12),
        attempts: z.number().int().min(1).max(64).default(2),
        /** At most this many judged-successful trajectories of one software in the SFT data. */
        perSoftwareCap: z.number().int().min(1).max(100_000).default(50),
        evaluationAttempts: z.number().int().min(1).max(64).default(2),
        /** Also train on each specialist's rollouts of its real tasks (its specialization's evaluation): off, since they are the evaluation set. */
        includeSeeds: z.boolean().default(false),
      })
      .prefault({}),
    schedules: z.array(schedule).default([]),
    metrics: z
      .strictObject({
        /** Where the endpoints listen: loopback on a workstation, 0.0.0.0 where Prometheus scrapes over the network. */
        host: z.string().min(1).default('127.0.0.1'),
        /** One port per process kind; 0: no endpoint. */
        ports: z
          .strictObject({ orchestrator: port.default(9464), vmHost: port.default(9465), gpu: port.default(9466), rewardService: port.default(9467) })
          .prefault({}),
      })
      .prefault({}),
    viewer: z
      .strictObject({
        /** Loopback by default. Any other address needs the login below (the viewer refuses to start without it). */
        host: z.string().min(1).default('127.0.0.1'),
        port: port.min(1).default(8300),
        auth: z
          .strictObject({
            /**
             * The environment variable holding the viewer's token (at least 16 characters), taken as
             * `Authorization: Bearer <token>` or HTTP Basic with any user name and the token as password.
             * Unset: the viewer runs open on a loopback address (with a warning) and refuses any other.
             */
            tokenEnv: envVarName.default('CODA_VIEWER_TOKEN'),
          })
          .prefault({}),
      })
      .prefault({}),
    dev: z
      .strictObject({
        /** Temporal's SQLite file, MinIO's objects, logs and pid files live here (relative to temporal.yaml). */
        dataDir: z.string().min(1).default('.data'),
        minioConsole: hostPort.default('127.0.0.1:9001'),
        /** Serve the Temporal Web UI on the gRPC port + 1000. */
        webUi: z.boolean().default(true),
        /**
         * Run the scripted model server (a TEST DOUBLE of the GPU model servers) in the dev stack,
         * for the models whose baseUrl points at it. Leave out where real vLLM servers exist.
         */
        scriptedModels: z
          .strictObject({
            port: z.number().int().min(1).max(65535),
            /** Share of planner steps that follow a wrong plan, so some rollouts fail. */
            errorRate: z.number().min(0).max(1).default(0),
            /** Share of replies in no valid format at all. */
            malformedRate: z.number().min(0).max(1).default(0),
            /** Share of task-generator replies with no JSON at all (recorded and skipped by task generation). */
            brokenTaskReplyRate: z.number().min(0).max(1).default(0.1),
            /**
             * The run seed of every double's random draws (the planner's samples, the judges' and the
             * executor's errors, the task generator, the trainer doubles): each draw is keyed by what it
             * decides and this seed, so the same seed gives the same run whatever order things happen in.
             */
            seed: z.number().int().min(0).max(2 ** 31 - 1).default(1),
            /** Milliseconds every answered completion waits before its reply, as a model generating does (0: at once). */
            latencyMs: z.number().int().min(0).max(600_000).default(0),
            /** How often each judge double (by model name) errs per vote, by resolution, and how often its reply is unreadable. */
            judges: z
              .record(
                z.string(),
                z.strictObject({
                  high: judgeErrors,
                  low: judgeErrors,
                  unreadable: z.number().min(0).max(1).default(0),
                  /**
                   * Where a false negative puts the first error: at a step drawn at random (a judge that
                   * misses, whose steps before it still count as positive), or at step 1 (a judge that
                   * inverts its verdicts: nothing of a successful trajectory is positive).
                   */
                  falseNegativeBlames: z.enum(['any-step', 'first-step']).default('any-step'),
                }),
              )
              .default({}),
          })
          .optional(),
      })
      .prefault({}),
  })
  .superRefine((config, ctx) => {
    const queueKeys = Object.keys(config.taskQueues);
    const seen = new Map<string, string>();
    const claim = (name: string, owner: string, path: PropertyKey[]): void => {
      const previous = seen.get(name);
      if (previous !== undefined) {
        ctx.addIssue({ code: 'custom', path, message: `task queue "${name}" is already used by ${previous}` });
      } else seen.set(name, owner);
    };
    for (const [key, name] of Object.entries(config.taskQueues)) claim(name, `taskQueues.${key}`, ['taskQueues', key]);
    const hostIds = new Set<string>();
    config.hosts.forEach((h, i) => {
      if (hostIds.has(h.id)) ctx.addIssue({ code: 'custom', path: ['hosts', i, 'id'], message: `duplicate host id "${h.id}"` });
      hostIds.add(h.id);
      claim(h.taskQueue, `hosts[${i}]`, ['hosts', i, 'taskQueue']);
    });
    config.schedules.forEach((s, i) => {
      if (!queueKeys.includes(s.taskQueue)) {
        ctx.addIssue({
          code: 'custom',
          path: ['schedules', i, 'taskQueue'],
          message: `unknown task queue "${s.taskQueue}": expected one of ${queueKeys.join(', ')}`,
        });
      }
    });
    const judgeNames = new Set<string>();
    config.models.judges.forEach((j, i) => {
      if (judgeNames.has(j.name)) ctx.addIssue({ code: 'custom', path: ['models', 'judges', i, 'name'], message: `duplicate judge name "${j.name}"` });
      judgeNames.add(j.name);
    });
    const checkJudges = (judges: readonly string[], path: PropertyKey[]): void =>
      judges.forEach((name, i) => {
        if (!judgeNames.has(name)) ctx.addIssue({ code: 'custom', path: [...path, i], message: `unknown judge "${name}": expected one of ${[...judgeNames].join(', ')}` });
      });
    checkJudges(config.judging.plan.judges, ['judging', 'plan', 'judges']);
    const labels = new Set<string>();
    config.judging.strategies?.forEach((strategy, i) => {
      checkJudges(strategy.plan.judges, ['judging', 'strategies', i, 'plan', 'judges']);
      if (labels.has(strategy.label)) ctx.addIssue({ code: 'custom', path: ['judging', 'strategies', i, 'label'], message: `duplicate strategy label "${strategy.label}"` });
      labels.add(strategy.label);
    });
  });

export type Config = z.output<typeof configSchema>;
/** The boxes a judge's low- and high-resolution screenshots are fitted into (judging.images). */
export type JudgeImages = Config['judging']['images'];
/** A strategy of judging.strategies; in a comparison, a multi-resolution one names the all-high-resolution plan with the same votes. */
export type JudgeStrategy = NonNullable<Config['judging']['strategies']>[number] & { readonly allHighTwin?: string };
export type HostConfig = Config['hosts'][number];

/** How many desktops a host runs: its local displays, or its VMs. */
export const hostCapacity = (host: HostConfig): number => (host.kind === 'local' ? host.desktops : host.kind === 'qemu' ? host.vms : host.vms.length);
export type LocalHostConfig = Extract<HostConfig, { kind: 'local' }>;
export type OsworldHostConfig = Extract<HostConfig, { kind: 'osworld' }>;
export type OsworldVmConfig = OsworldHostConfig['vms'][number];
export type QemuHostConfig = Extract<HostConfig, { kind: 'qemu' }>;
export type ModelEndpoint = z.output<typeof modelEndpoint>;
export type LocalApp = Config['localApps'][number];
export type JudgeEndpoint = Config['models']['judges'][number];
export type JudgePlanConfig = z.output<typeof judgePlan>;
export const judgePlanConfigSchema = judgePlan;
export type StorageConfig = Config['storage'];
export type TrainingConfig = Config['training'];

/**
 * The boxes some role fits screenshots into — the planner's and the executor's `image`, the
 * judge's low and high resolutions — for which a host stores a variant of every screenshot as
 * it captures it (core/images.ts). One list for the hosts that write variants and the gateway
 * that reads them.
 */
export function preparedBoxes(config: Pick<Config, 'models' | 'judging'>): Array<{ width: number; height: number }> {
  const boxes = [config.models.planner.image, config.models.executor.image, config.judging.images.low, config.judging.images.high];
  const seen = new Set<string>();
  return boxes.flatMap((box) => {
    if (box === undefined || seen.has(`${box.width}x${box.height}`)) return [];
    seen.add(`${box.width}x${box.height}`);
    return [{ width: box.width, height: box.height }];
  });
}

/**
 * How many decision records the orchestrator worker keeps in memory (activities/models/decision.ts):
 * every running rollout's so far, so a step reads its earlier steps' decisions from memory and not
 * from S3. With a fixed 1,024, 300 rollouts stepping together evicted a rollout's records within
 * ~3 steps, and each step read the older ones back (S3 GETs growing with the step number). Sized for
 * maxConcurrentRollouts rollouts of 32 steps, a record being ~1–2 KB (~64 MB at 1,000 rollouts);
 * beyond that the oldest go and are read back when needed.
 */
export function decisionCacheEntries(config: Pick<Config, 'limits'>): number {
  return Math.max(1024, config.limits.maxConcurrentRollouts * 32);
}

/**
 * The orchestrator worker's settings, derived from the load it must hold (limits.maxConcurrentRollouts
 * rollouts at once) rather than the SDK's defaults: every rollout and the workflows above it stay
 * cached (a step never replays a history), each rollout has a local-activity slot for its decision,
 * and there are enough workflow-task slots and pollers to keep a queue of short tasks moving.
 */
export function orchestratorSizing(config: Pick<Config, 'limits'>) {
  const rollouts = config.limits.maxConcurrentRollouts;
  const workflowTasks = Math.min(200, Math.max(40, Math.ceil(rollouts / 5)));
  return {
    maxCachedWorkflows: Math.max(500, Math.ceil(rollouts * 1.2) + 100),
    maxConcurrentLocalActivityExecutions: Math.max(100, rollouts),
    maxConcurrentWorkflowTaskExecutions: workflowTasks,
    maxConcurrentWorkflowTaskPolls: Math.min(Math.max(10, Math.ceil(rollouts / 20)), workflowTasks),
    maxConcurrentActivityTaskExecutions: Math.max(100, Math.ceil(rollouts / 4)),
  };
}
