import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../../config/load';
import { resolveBatchInput } from '../../../workflows/rollout/contract';
import { resolveEvaluationInput } from '../../../workflows/evaluation/contract';
import { resolveGeneralizationInput, resolveSpecializationInput } from '../../../workflows/training/contract';
import { resolveJudgeEvaluationInput, resolveJudgeInput } from '../../../workflows/judging/contract';
import { resolveTaskGenerationInput } from '../../../workflows/tasks/contract';
import { ValidationError } from '../../../core/validation';
import { REPO_CONFIG } from '../../../infra/ephemeral';
import { validationProblems } from '../../support/validation';

const repoText = readFileSync(REPO_CONFIG, 'utf8');
const config = parseConfig(repoText, 'temporal.yaml', {});

const problems = (resolve: () => unknown): string[] => validationProblems(resolve);

describe('workflow inputs: checked and completed from temporal.yaml', () => {
  it('completes a specialization: the real tasks measure the judge every round, are not trained on, and the precision floor is 0.6', () => {
    const input = resolveSpecializationInput(config, { software: 'KAlgebra' }, 'specialization-KAlgebra-s1');
    assert.deepEqual([input.includeSeeds, input.judgePrecisionFloor, input.baseEvaluationRun], [false, 0.6, `${input.run}-base-eval`]);
    const asked = resolveSpecializationInput(config, { software: 'KAlgebra', includeSeeds: true, judgePrecisionFloor: 0 }, 'x');
    assert.deepEqual([asked.includeSeeds, asked.judgePrecisionFloor], [true, 0]);
    // The judge is measured on the evaluation's rollouts: there is no separate count of real-task rollouts.
    assert.deepEqual(problems(() => resolveSpecializationInput(config, { software: 'KAlgebra', judgePrecisionFloor: 1.2, realTaskAttempts: 1 }, 'x')), [
      'judgePrecisionFloor: expected a precision from 0 to 1',
      '(root): Unrecognized key: "realTaskAttempts"',
    ]);
    const yaml = parse(repoText) as { specialization: Record<string, unknown> };
    yaml.specialization.judgePrecisionFloor = 1.5;
    assert.throws(() => parseConfig(stringify(yaml), 'temporal.yaml', {}), /specialization\.judgePrecisionFloor/);
  });

  it('completes a minimal batch from the deployment, naming its run after the workflow id', () => {
    const input = resolveBatchInput(config, { software: 'KAlgebra' }, 'nightly-evaluation-2026-11-23T02:00:00Z');
    assert.equal(input.run, 'nightly-evaluation-2026-11-23T020000Z');
    assert.equal(input.attempts, 1);
    assert.equal(input.stage, 'evaluation');
    assert.equal(input.concurrency, 2, 'every desktop of every host');
    assert.equal(input.rolloutsPerRun, 200);
    assert.equal(input.settings.leaseQueue, 'coda-desktop-leases');
    assert.equal(input.settings.plannerModel, undefined);
    assert.equal(resolveBatchInput(config, { software: 'KAlgebra', planner: { name: 'sft', model: 'coda-sft-3' } }, 'x').settings.plannerModel, 'coda-sft-3');
  });

  it('names every bad field of a batch', () => {
    assert.deepEqual(problems(() => resolveBatchInput(config, { software: '', attempts: 0, taskIds: [], extra: 1 }, 'x')), [
      'software: expected a software name such as KAlgebra',
      'taskIds: expected at least one task id',
      'attempts: expected an integer >= 1',
      '(root): Unrecognized key: "extra"',
    ]);
    assert.deepEqual(problems(() => resolveBatchInput(config, 'KAlgebra', 'x')), ['(root): Invalid input: expected object, received string']);
  });

  it('reads the attempt from a judge input\'s manifest key and fills in the deployment\'s plan with the judges\' models', () => {
    const input = resolveJudgeInput(config, { manifestKey: 'coda/runs/r1/KAlgebra/A-01/3/manifest.json' });
    assert.deepEqual(input.ref, { run: 'r1', software: 'KAlgebra', task: 'A-01', attempt: 3 });
    assert.equal(input.label, 'default');
    assert.deepEqual(input.plan.judges, [{ name: 'judge-a', model: 'judge-a' }, { name: 'judge-b', model: 'judge-b' }]);
    assert.deepEqual(input.plan.temperatures, { first: 0, repeat: 1, repeatTopP: 0.6 });
    assert.deepEqual(input.images, { low: { width: 640, height: 360 }, high: { width: 1280, height: 720 } });
    assert.deepEqual(problems(() => resolveJudgeInput(config, { manifestKey: 'coda/runs/r1/KAlgebra/A-01/3/manifest.json', plan: { lowResolutionVotes: 1, highResolutionVotes: 0, judges: ['judge-z'] } })), [
      'plan.judges[0]: unknown judge "judge-z": expected one of judge-a, judge-b',
    ]);
  });

  it('pairs each multi-resolution judge strategy with the all-high-resolution plan of the same votes', () => {
    const input = resolveJudgeEvaluationInput(config, { run: 'r1', software: 'KAlgebra' }, 'judge-eval-x');
    assert.deepEqual(
      input.strategies.map((s) => [s.label, s.allHighTwin ?? null, s.plan.lowResolutionVotes, s.plan.highResolutionVotes, s.plan.judges.join('+')]),
      [
        ['single', null, 0, 1, 'judge-a'],
        ['voting4', null, 0, 4, 'judge-a'],
        ['voting4-multires', 'voting4', 2, 2, 'judge-a'],
        ['voting4-ensemble', 'voting4-ensemble-allhigh', 2, 2, 'judge-a+judge-b'],
        ['voting4-ensemble-allhigh', null, 0, 4, 'judge-a+judge-b'],
      ],
    );
    const chosen = resolveJudgeEvaluationInput(config, { run: 'r1', software: 'KAlgebra', strategies: ['voting4-multires'] }, 'x');
    assert.deepEqual(chosen.strategies.map((s) => s.label), ['voting4-multires', 'voting4'], 'the twin is judged too, even when not asked for');
    assert.deepEqual(problems(() => resolveJudgeEvaluationInput(config, { run: 'r1', software: 'KAlgebra', strategies: ['best'] }, 'x')), [
      'strategies: unknown strategy "best": expected one of single, voting4, voting4-multires, voting4-ensemble',
    ]);
  });

  it('completes task generation and evaluation inputs from their sections', () => {
    assert.deepEqual(resolveTaskGenerationInput(config, { software: 'KAlgebra' }, 'task-generation-KAlgebra-v1'), {
      software: 'KAlgebra',
      version: 'task-generation-KAlgebra-v1',
      count: 60,
      tasksPerRequest: 30,
      maxRequests: 4,
      similarityThreshold: 0.85,
      maxSteps: 15,
    });
    assert.deepEqual(resolveEvaluationInput(config, {}, 'evaluation-e1', ['KAlgebra']), {
      run: 'evaluation-e1',
      series: 'manual',
      software: ['KAlgebra'],
      attempts: 8,
      planners: [{ name: 'coda-planner', model: 'coda-planner' }],
    });
  });

  it('takes a specialization\'s maxStaleness from temporal.yaml (0: rounds in order), 1 when asked, and refuses 2 or more as not supported yet', () => {
    assert.equal(resolveSpecializationInput(config, { software: 'KAlgebra' }, 'w').maxStaleness, 0);
    assert.equal(resolveSpecializationInput(config, { software: 'KAlgebra', maxStaleness: 1 }, 'w').maxStaleness, 1);
    assert.deepEqual(problems(() => resolveSpecializationInput(config, { software: 'KAlgebra', maxStaleness: 2 }, 'w')), ['maxStaleness: expected 0 or 1 (a staleness of 2 or more is not supported yet)']);
    assert.deepEqual(problems(() => resolveSpecializationInput(config, { software: 'KAlgebra', maxStaleness: 0.5 }, 'w')).map((p) => p.split(':')[0]), ['maxStaleness']);
    const yaml = parse(repoText) as { specialization: Record<string, unknown> };
    assert.equal(yaml.specialization.maxStaleness, 0, 'temporal.yaml says the default');
    yaml.specialization.maxStaleness = 1;
    assert.equal(resolveSpecializationInput(parseConfig(stringify(yaml), 'temporal.yaml', {}), { software: 'KAlgebra' }, 'w').maxStaleness, 1);
    yaml.specialization.maxStaleness = 3;
    assert.throws(() => parseConfig(stringify(yaml), 'temporal.yaml', {}), /specialization\.maxStaleness.*not supported yet/s);
  });

  it('names the base evaluation run of a specialization after its run, unless given, and keeps a planner row\'s own run', () => {
    assert.equal(resolveSpecializationInput(config, { software: 'KAlgebra', run: 's1' }, 'w').baseEvaluationRun, 's1-base-eval');
    assert.equal(resolveSpecializationInput(config, { software: 'KAlgebra', run: 's1', baseEvaluationRun: 'demo-base-eval' }, 'w').baseEvaluationRun, 'demo-base-eval');
    assert.deepEqual(problems(() => resolveSpecializationInput(config, { software: 'KAlgebra', baseEvaluationRun: '../x' }, 'w')).map((p) => p.split(':')[0]), ['baseEvaluationRun']);
    const input = resolveEvaluationInput(config, { planners: [{ name: 'base', model: 'm', run: 'shared' }, { name: 'b', model: 'n' }] }, 'evaluation-e1', ['KAlgebra']);
    assert.deepEqual(input.planners, [{ name: 'base', model: 'm', run: 'shared' }, { name: 'b', model: 'n' }]);
  });

  it('evaluates a planner row on the software it names only, among those evaluated; a generalization evaluates its specialists everywhere unless told not to', () => {
    const both = ['KAlgebra', 'TeXstudio'];
    const own = resolveEvaluationInput(config, { software: both, planners: [{ name: 'base', model: 'm' }, { name: 'specialist-KAlgebra', model: 's', software: ['KAlgebra'] }] }, 'evaluation-e1', both);
    assert.deepEqual(own.planners.map((p) => p.software), [undefined, ['KAlgebra']]);
    assert.deepEqual(problems(() => resolveEvaluationInput(config, { software: ['KAlgebra'], planners: [{ name: 's', model: 's', software: ['TeXstudio'] }] }, 'e', both)), [
      'planners[0].software: "TeXstudio" is not among the software evaluated',
    ]);
    assert.deepEqual(problems(() => resolveEvaluationInput(config, { planners: [{ name: 's', model: 's', software: [] }] }, 'e', both)), ['planners[0].software: expected at least one software']);
    const specialists = [{ software: 'KAlgebra', checkpoint: 'k-r1' }, { software: 'TeXstudio', checkpoint: 't-r1' }];
    assert.equal(resolveGeneralizationInput(config, { specialists }, 'generalization-g', both).crossEvaluation, true);
    assert.equal(resolveGeneralizationInput(config, { specialists, crossEvaluation: false }, 'generalization-g', both).crossEvaluation, false);
    assert.deepEqual(problems(() => resolveGeneralizationInput(config, { specialists, crossEvaluation: 'no' }, 'g', both)), ['crossEvaluation: Invalid input: expected boolean, received string']);
  });
});

describe('temporal.yaml judging section', () => {
  const withJudging = (edit: (doc: Record<string, any>) => void): string[] => {
    const doc = parse(repoText) as Record<string, any>;
    edit(doc);
    try {
      parseConfig(stringify(doc), 'temporal.yaml', {});
    } catch (err) {
      assert.ok(err instanceof ValidationError);
      return err.problems;
    }
    return [];
  };

  it('refuses unknown judges, a low box that is not smaller, repeated labels and plans without votes', () => {
    assert.deepEqual(withJudging((d) => (d.judging.plan.judges = ['judge-a', 'judge-q'])), ['judging.plan.judges[1]: unknown judge "judge-q": expected one of judge-a, judge-b']);
    assert.deepEqual(withJudging((d) => (d.judging.images.low = { width: 1920, height: 1080 })), ['judging.images.low: expected a smaller box than images.high']);
    assert.deepEqual(withJudging((d) => (d.judging.strategies[1].label = 'single')), ['judging.strategies[1].label: duplicate strategy label "single"']);
    assert.deepEqual(withJudging((d) => Object.assign(d.judging.plan, { highResolutionVotes: 0, lowResolutionVotes: 0 })), ['judging.plan: a judge plan needs at least one vote']);
    assert.deepEqual(withJudging((d) => (d.models.judges[1].maxImages = 0)), ['models.judges[1].maxImages: Too small: expected number to be >=1']);
  });
});
