import { normaliseInstruction, similarAtLeast } from '../../core/task-dedupe';
import type { ChatRequest, Reply } from '../openai-server';
import { everyTask, writesTasksFor, type TemplateContext, type TemplateTask } from './generated-tasks';
import { hashText, keyedRandom } from './seeded';

/**
 * TEST DOUBLE of the task-generator model (a text LLM such as Qwen2.5-72B in the paper). It reads
 * the prompt of core/prompts/task-generator.ts — the software, the seed tasks, the tasks of earlier
 * rounds, what is already written, how many to write — and answers as such models do, flaws
 * included: mostly a fenced JSON list of tasks from the templates of generated-tasks.ts that are
 * new (no template task like one it is shown: the seeds aside, the earlier rounds' tasks, the ones
 * already written or earlier in the same reply; when one template has nothing new left it takes
 * another), but sometimes a seed, an earlier round's task or an already written task again
 * (lightly reworded), an item without an instruction, Python-style JSON (single quotes, True,
 * trailing commas) that needs repair, or no JSON at all. Only the user message's sections are read
 * as tasks, never the system prompt's bullets. It does not grade difficulty by what was solved: it
 * moves on to other template tasks whatever the verdicts, and writes more of the kinds of task
 * (plan shapes) its seeds show most, as a model imitating its examples does. The same prompt gets the same reply at
 * temperature 0 (seeded by its text), and at a sampling temperature the same prompt and request
 * seed do, as with vLLM. Compared with: the prompt's contract (docs/method.md, "Task generation"); no real generator
 * runs here.
 */

export interface TaskGeneratorOptions {
  readonly model: string;
  /** What generated tasks of a software start from (the document they show), for templates that refer to it. */
  readonly contextOf?: (software: string) => TemplateContext;
  /** The kind of the task an instruction names (the shape of its plan), when known: the double writes more of the kinds its seeds show most. */
  readonly kindOf?: (instruction: string, software: string) => string | undefined;
  readonly seed?: number;
  /** Share of replies with no JSON at all. */
  readonly brokenRate?: number;
}

/** From this similarity (core/task-dedupe.ts) the double counts two tasks as the same: the pipeline's default threshold. */
const SAME_TASK = 0.85;

const reword = (instruction: string): string => `${instruction.charAt(0).toLowerCase()}${instruction.slice(1).replace(/\.$/, '')}  .`;

/** What the user message shows, read section by section (sections are separated by blank lines). */
export interface GeneratorPrompt {
  readonly software: string;
  readonly count: number;
  readonly seeds: string[];
  /** Tasks of earlier rounds (any verdict). */
  readonly earlier: string[];
  /** Tasks already written for this set. */
  readonly written: string[];
}

export function readGeneratorPrompt(request: ChatRequest): GeneratorPrompt | undefined {
  const content = (role: string): string =>
    request.messages
      .filter((m) => m.role === role)
      .map((m) => (typeof m.content === 'string' ? m.content : m.content.filter((p) => p.type === 'text').map((p) => String(p.text)).join('\n')))
      .join('\n');
  const software = /learning to use (.+?)\. The agent/.exec(content('system'))?.[1];
  const user = content('user');
  const count = Number(/Write (\d+) new tasks\.$/.exec(user)?.[1] ?? '0');
  if (software === undefined || count < 1) return undefined;
  const sections = user.split(/\n\n+/);
  const linesOf = (heading: RegExp, item: RegExp): string[] =>
    sections.filter((section) => heading.test(section)).flatMap((section) => [...section.matchAll(item)].map((m) => m[1] as string));
  return {
    software,
    count,
    seeds: linesOf(/^Here are real tasks for /, /^\d+\. (.+)$/gm),
    earlier: linesOf(/^Tasks of earlier rounds/, /^- \[round \d+[^\]]*\] (.+)$/gm),
    written: linesOf(/^These tasks are already written/, /^- (.+)$/gm),
  };
}

/**
 * New template tasks, one at a time: each is drawn from a template with a weight of one plus the
 * number of seeds of the template's kind (a model shown examples writes more tasks like the ones
 * it is shown most; every kind keeps a chance), among the templates with something new left; then
 * a random task of the template unlike every task seen.
 */
function newTasks(software: string, context: TemplateContext | undefined, seen: readonly string[], seedKinds: ReadonlyMap<string, number>, kindOf: (instruction: string) => string | undefined, random: () => number): () => TemplateTask | undefined {
  const templates = everyTask(software, context);
  const known = new Set(seen.map(normaliseInstruction));
  const unlike = (task: TemplateTask, others: readonly string[]): boolean => !known.has(normaliseInstruction(task.instruction)) && others.every((other) => !similarAtLeast(task.instruction, other, SAME_TASK));
  const weights = templates.map((tasks) => {
    const kind = tasks[0] === undefined ? undefined : kindOf(tasks[0].instruction);
    return 1 + (kind === undefined ? 0 : (seedKinds.get(kind) ?? 0));
  });
  const left = templates.map((tasks) => tasks.filter((task) => unlike(task, seen)));
  return () => {
    const open = left.flatMap((tasks, i) => (tasks.length > 0 ? [i] : []));
    if (open.length === 0) return undefined;
    let roll = random() * open.reduce((sum, i) => sum + (weights[i] as number), 0);
    const chosen = open.find((i) => (roll -= weights[i] as number) < 0) ?? (open.at(-1) as number);
    const tasks = left[chosen] as TemplateTask[];
    const task = tasks.splice(Math.floor(random() * tasks.length), 1)[0] as TemplateTask;
    known.add(normaliseInstruction(task.instruction));
    for (const [i, others] of left.entries()) left[i] = others.filter((other) => unlike(other, [task.instruction]));
    return task;
  };
}

/** How many of `seeds` are of each kind. */
function kindCounts(seeds: readonly string[], kindOf: (instruction: string) => string | undefined): Map<string, number> {
  const counts = new Map<string, number>();
  for (const seed of seeds) {
    const kind = kindOf(seed);
    if (kind !== undefined) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

export function taskGeneratorPolicy(opts: TaskGeneratorOptions): (request: ChatRequest) => Reply {
  return (request) => {
    const prompt = readGeneratorPrompt(request);
    if (prompt === undefined) return { status: 400, message: 'the task-generator double expects the prompt of core/prompts/task-generator.ts' };
    const { software, count, seeds, earlier, written } = prompt;
    // Greedy decoding (temperature 0) gives the same reply to the same prompt; sampling gives one per request seed.
    const sampling = request.temperature > 0 && request.seed !== undefined ? `\nsampling seed ${request.seed}` : '';
    const random = keyedRandom(opts.seed ?? 1, 'task-generator', hashText(textOf(request)), sampling);
    if (random() < (opts.brokenRate ?? 0.1)) return { texts: [`Sure! Here are ${count} tasks for ${software}, one per line:\n1. Open the application.\n2. Close it again.`] };

    const kindOf = (instruction: string): string | undefined => opts.kindOf?.(instruction, software);
    const next = writesTasksFor(software) ? newTasks(software, opts.contextOf?.(software), [...seeds, ...earlier, ...written], kindCounts(seeds, kindOf), kindOf, random) : () => undefined;
    const again = (from: readonly string[]): string => JSON.stringify({ instruction: reword(from[Math.floor(random() * from.length)] as string) });
    const items: string[] = [];
    for (let i = 0; i < count; i++) {
      const roll = random();
      if (roll < 0.08 && seeds.length > 0) items.push(again(seeds));
      else if (roll < 0.13 && earlier.length > 0) items.push(again(earlier));
      else if (roll < 0.18 && written.length > 0) items.push(again(written));
      else if (roll < 0.21) items.push(JSON.stringify({ title: 'a task without an instruction' }));
      else if (!writesTasksFor(software)) items.push(JSON.stringify({ instruction: `In ${software}, open the Help menu and read the version number of the application.` }));
      else {
        // Nothing new left: the model repeats itself, as one does when asked for more than it has.
        const task = next();
        items.push(task !== undefined ? JSON.stringify({ instruction: task.instruction }) : again([...earlier, ...written, ...seeds]));
      }
    }
    const list = `{"tasks": [\n  ${items.join(',\n  ')}\n]}`;
    // Some models write Python literals (when no text has a quote of its own); core/reply-text.ts repairs them.
    const body = random() < 0.2 && !list.includes("'") ? list.replace(/"/g, "'").replace(/\n]}$/, ',\n]}') : list;
    return { texts: [`Here are ${count} new tasks for ${software}, from the easiest to the hardest.\n\`\`\`json\n${body}\n\`\`\``] };
  };
}

const textOf = (request: ChatRequest): string =>
  request.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.filter((p) => p.type === 'text').map((p) => String(p.text)).join('\n'))).join('\n');
