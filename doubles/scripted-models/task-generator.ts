import type { ChatRequest, Reply } from '../openai-server';
import { writesTasksFor, writeTask, type TemplateContext } from './generated-tasks';
import { textParts } from './agent-policy';
import { hashText, prng } from './seeded';

/**
 * TEST DOUBLE of the task-generator model (a text LLM such as Qwen2.5-72B in the paper). It reads
 * the prompt of core/prompts/task-generator.ts — the software, the seed tasks, what is already
 * written, how many to write — and answers as such models do, flaws included: mostly a fenced JSON
 * list of new tasks from the templates of generated-tasks.ts, but sometimes a seed or an earlier
 * task again (lightly reworded), an item without an instruction, Python-style JSON (single quotes,
 * True, trailing commas) that needs repair, or no JSON at all. The same request gets the same
 * reply (seeded by its text).
 */

export interface TaskGeneratorOptions {
  readonly model: string;
  /** What generated tasks of a software start from (the document they show), for templates that refer to it. */
  readonly contextOf?: (software: string) => TemplateContext;
  readonly seed?: number;
  /** Share of replies with no JSON at all. */
  readonly brokenRate?: number;
}

const reword = (instruction: string): string => `${instruction.charAt(0).toLowerCase()}${instruction.slice(1).replace(/\.$/, '')}  .`;

export function taskGeneratorPolicy(opts: TaskGeneratorOptions): (request: ChatRequest) => Reply {
  return (request) => {
    const texts = textParts(request);
    const all = texts.join('\n');
    const software = /learning to use (.+?)\. The agent/.exec(all)?.[1];
    const count = Number(/Write (\d+) new tasks\./.exec(all)?.[1] ?? '0');
    if (software === undefined || count < 1) return { status: 400, message: 'the task-generator double expects the prompt of core/prompts/task-generator.ts' };
    const seeds = [...all.matchAll(/^\d+\. (.+)$/gm)].map((m) => m[1] as string);
    const written = [...all.matchAll(/^- (.+)$/gm)].map((m) => m[1] as string);
    const random = prng(hashText(`${all}\n${opts.seed ?? 1}`));
    if (random() < (opts.brokenRate ?? 0.1)) return { texts: [`Sure! Here are ${count} tasks for ${software}, one per line:\n1. Open the application.\n2. Close it again.`] };

    const items: string[] = [];
    for (let i = 0; i < count; i++) {
      const roll = random();
      if (roll < 0.08 && seeds.length > 0) items.push(JSON.stringify({ instruction: reword(seeds[Math.floor(random() * seeds.length)] as string) }));
      else if (roll < 0.14 && written.length > 0) items.push(JSON.stringify({ instruction: reword(written[Math.floor(random() * written.length)] as string) }));
      else if (roll < 0.17) items.push(JSON.stringify({ title: 'a task without an instruction' }));
      else if (writesTasksFor(software)) items.push(JSON.stringify({ instruction: writeTask(software, random, opts.contextOf?.(software)).instruction }));
      else items.push(JSON.stringify({ instruction: `In ${software}, open the Help menu and read the version number of the application.` }));
    }
    const list = `{"tasks": [\n  ${items.join(',\n  ')}\n]}`;
    // Some models write Python literals (when no text has a quote of its own); core/reply-text.ts repairs them.
    const body = random() < 0.2 && !list.includes("'") ? list.replace(/"/g, "'").replace(/\n]}$/, ',\n]}') : list;
    return { texts: [`Here are ${count} new tasks for ${software}, from the easiest to the hardest.\n\`\`\`json\n${body}\n\`\`\``] };
  };
}

