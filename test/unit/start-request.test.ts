import assert from 'node:assert/strict';
import { Command } from 'commander';
import { loadConfig } from '../../config/load';
import { registerStart } from '../../cli/commands/start';
import { optionKey, startRequest } from '../../cli/start';
import { START_KINDS } from '../../cli/start-options';
import { ValidationError } from '../../core/validation';

/**
 * `coda start`'s one table of options (cli/start-options.ts), without a server: the command line
 * commander builds from it hands each value under the name the input builder reads, and the input
 * built from every option at once is one the workflow's contract accepts.
 */

const config = loadConfig();

/** A value each option's reader accepts, by the placeholder of its flags. */
function sample(flags: string): string | string[] | true {
  const placeholder = /<([^>]+)>/.exec(flags)?.[1];
  if (placeholder === undefined) return true;
  if (flags.startsWith('--series ')) return 'nightly';
  if (flags.startsWith('--strategies ')) return 'single,voting4';
  const samples: Record<string, string | string[]> = {
    name: 'KAlgebra',
    names: 'KAlgebra',
    'name=model...': ['base=coda-planner'],
    'software=checkpoint...': ['KAlgebra=s1-r2'],
    'software:ids...': ['KAlgebra:A-01,C-03'],
    ids: 'A-01,C-03',
    k: '2',
    n: '1',
    p: '0.5',
    ref: 'r1/KAlgebra/A-01/0',
  };
  return samples[placeholder] ?? 'r1';
}

describe('coda start: the options table', () => {
  it('gives every option of every kind, read from its sample, to the field it names, and the contract accepts the whole input', () => {
    for (const [kind, definition] of Object.entries(START_KINDS)) {
      const options = Object.fromEntries(definition.options.map((o) => [optionKey(o.flags), sample(o.flags)]));
      const request = startRequest(config, kind, options);
      assert.equal(request.workflowType, definition.workflowType, kind);
      assert.deepEqual(Object.keys(request.input).sort(), [...new Set(definition.options.map((o) => o.field))].sort(), kind);
      assert.ok(request.workflowId.length > 0, kind);
    }
  });

  it('builds the input commander parses from a command line, and names a fresh run when none is given', async () => {
    const program = new Command().exitOverride();
    let parsed: Record<string, unknown> | undefined;
    registerStart(program, () => {
      throw new Error('no context needed');
    });
    const specialization = program.commands.find((c) => c.name() === 'start')!.commands.find((c) => c.name() === 'specialization')!;
    specialization.action((options: Record<string, unknown>) => {
      parsed = options;
    });
    await program.parseAsync(['start', 'specialization', '--software', 'KAlgebra', '--tasks-per-round', '3', '--evaluation-tasks', 'A-01,C-03', '--train-on-real-tasks'], { from: 'user' });
    const request = startRequest(config, 'specialization', parsed as Record<string, string>);
    assert.deepEqual({ ...request.input, run: undefined }, { software: 'KAlgebra', tasksPerRound: 3, evaluationTaskIds: ['A-01', 'C-03'], includeSeeds: true, run: undefined });
    assert.match(String(request.input.run), /^spec-/);
    assert.equal(request.workflowId, `specialization-KAlgebra-${String(request.input.run)}`);
  });

  it('refuses a missing required option and an unknown kind, naming what was expected', () => {
    assert.throws(() => startRequest(config, 'judge', {}), (err: unknown) => err instanceof ValidationError && /--trajectory: required \(RUN\/SOFTWARE\/TASK\/ATTEMPT or a manifest key\)/.test(err.message));
    assert.throws(() => startRequest(config, 'rollout', {}), /unknown kind "rollout": expected batch, specialization, generalization, evaluation, task-generation, judge, judge-run, judge-eval/);
  });
});
