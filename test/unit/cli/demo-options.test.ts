import assert from 'node:assert/strict';
import { DemoUsageError, FIRST_LOOK, FULL, parseDemoOptions, SMALL_PLANNER } from '../../../cli/demo-options';
import { defaultPayloadConverter } from '@temporalio/common';
import { formatElapsed, ProgressLine } from '../../../cli/progress-line';
import { trainingStep } from '../../../cli/follow';

const LOCAL = ['KAlgebra', 'TeXstudio'];
const now = new Date('2026-11-26T10:11:12Z');

describe('the demo: its options and its progress lines', () => {
  it('runs a first look by default (every stage, no cross cells) and --full at k = 8 with every specialist on every software', () => {
    const firstLook = { evaluationTaskIds: FIRST_LOOK.evaluationTaskIds, judgePrecisionFloor: 0 };
    const doubles = { planner: 'double', includeSeeds: false } as const;
    assert.deepEqual(parseDemoOptions([], LOCAL, now), { software: LOCAL, rounds: 1, tasks: FIRST_LOOK.tasks, k: FIRST_LOOK.k, crossEvaluation: false, ...firstLook, ...doubles, full: false, run: 'demo-20261126101112' });
    assert.deepEqual(FIRST_LOOK.evaluationTaskIds.KAlgebra.length, 10);
    assert.deepEqual(parseDemoOptions(['--full'], LOCAL, now), { software: LOCAL, rounds: 1, tasks: FULL.tasks, k: 8, crossEvaluation: true, ...doubles, full: true, run: 'demo-20261126101112' });
    assert.deepEqual(parseDemoOptions(['--full', '--k', '4', '--software', 'KAlgebra', '--tasks', '3', '--run', 'my-demo', '--planner', 'double'], LOCAL, now), { software: ['KAlgebra'], rounds: 1, tasks: 3, k: 4, crossEvaluation: true, ...doubles, full: true, run: 'my-demo' });
  });

  it('runs --planner small on KAlgebra\'s 12 local tasks at k = 4, training on the real tasks too (it solves no generated one)', () => {
    const small = { software: ['KAlgebra'], crossEvaluation: false, evaluationTaskIds: SMALL_PLANNER.evaluationTaskIds, judgePrecisionFloor: 0, planner: 'small', includeSeeds: true, full: false } as const;
    assert.deepEqual(parseDemoOptions(['--planner', 'small'], LOCAL, now), { ...small, rounds: 1, tasks: 2, k: 4, run: 'demo-20261126101112' });
    assert.equal(SMALL_PLANNER.evaluationTaskIds.KAlgebra.length, 12);
    assert.deepEqual(parseDemoOptions(['--planner', 'small', '--rounds', '3', '--k', '2', '--tasks', '4', '--software', 'KAlgebra', '--run', 'sp'], LOCAL, now), { ...small, rounds: 3, tasks: 4, k: 2, run: 'sp' });
  });

  it('refuses a bad option before anything starts, naming it and what was expected', () => {
    const refused = (argv: string[]): string => {
      try {
        parseDemoOptions(argv, LOCAL, now);
      } catch (err) {
        assert.ok(err instanceof DemoUsageError);
        return err.message.split('\n')[0]!;
      }
      return assert.fail(`${argv.join(' ')} was accepted`);
    };
    assert.equal(refused(['--k', '0']), '--k: expected an integer from 1 to 9999, got "0"');
    assert.equal(refused(['--tasks', '2.5']), '--tasks: expected an integer from 1 to 9999, got "2.5"');
    assert.equal(refused(['--software', 'KAlgebra,Excel']), '--software: expected distinct names among KAlgebra, TeXstudio, got "KAlgebra,Excel"');
    assert.equal(refused(['--software', 'KAlgebra,KAlgebra']), '--software: expected distinct names among KAlgebra, TeXstudio, got "KAlgebra,KAlgebra"');
    assert.equal(refused(['--run', '../x']), '--run: expected letters, digits, . _ - (at most 64, starting with a letter or digit), got "../x"');
    assert.equal(refused(['--rounds', '21']), '--rounds: expected an integer from 1 to 20, got "21"');
    assert.equal(refused(['--planner', 'large']), '--planner: expected double or small, got "large"');
    assert.equal(refused(['--planner', 'small', '--full']), '--full: not with --planner small, which evaluates the 12 KAlgebra tasks its starting SFT comes from (set --k instead)');
    assert.equal(refused(['--planner', 'small', '--software', 'KAlgebra,TeXstudio']), '--software: --planner small specializes KAlgebra alone (its server serves one model at a time, and its rows are KAlgebra\'s), got "KAlgebra,TeXstudio"');
    assert.match(refused(['--fast']), /Unknown option '--fast'/);
    assert.match(refused(['extra']), /positional argument/);
  });

  it("shows the trainer's step from the train activity's last heartbeat, its phase before training, and nothing without one", () => {
    const pending = (type: string, ...beats: object[]) => [{ activityType: { name: type }, heartbeatDetails: { payloads: beats.map((b) => defaultPayloadConverter.toPayload(b)) } }];
    assert.deepEqual(trainingStep(pending('train', { phase: 'preparing', step: 0, metrics: {}, host: 'h' }, { phase: 'training', step: 40, totalSteps: 210, metrics: {}, host: 'h' })), ['training step 40/210']);
    assert.deepEqual(trainingStep(pending('train', { phase: 'training', step: 3, metrics: {}, host: 'h' })), ['training step 3/?']);
    assert.deepEqual(trainingStep(pending('train', { phase: 'uploading', step: 210, metrics: {}, host: 'h' })), ['trainer uploading']);
    assert.deepEqual(trainingStep(pending('servePlanner', { phase: 'training', step: 1 })), []);
    assert.deepEqual(trainingStep([{ activityType: { name: 'train' } }]), []);
  });

  it('rewrites one line in place on a terminal, and prints a plain line on change at most every 10 s elsewhere', () => {
    let clock = 0;
    const written = (tty: boolean) => {
      const out: string[] = [];
      clock = 0;
      return { out, line: new ProgressLine({ isTTY: tty, columns: 30, write: (t: string) => out.push(t) }, 10_000, () => clock) };
    };
    const tty = written(true);
    tty.line.update('rollouts 1/4');
    clock = 61_000;
    tty.line.update('rollouts 2/4 and a long tail of words');
    tty.line.end('✓ rollouts 4/4');
    assert.deepEqual(tty.out, ['\r\x1b[Krollouts 1/4 (0:00)', '\r\x1b[Krollouts 2/4 and a long tail…', '\r\x1b[K✓ rollouts 4/4 (1:01)\n']);

    const plain = written(false);
    plain.line.update('rollouts 1/4');
    clock = 3_000;
    plain.line.update('rollouts 2/4');
    clock = 12_000;
    plain.line.update('rollouts 3/4');
    clock = 13_000;
    plain.line.update('rollouts 3/4');
    plain.line.end('✓ rollouts 4/4');
    assert.deepEqual(plain.out, ['rollouts 1/4 (0:00)\n', 'rollouts 3/4 (0:12)\n', '✓ rollouts 4/4 (0:13)\n']);
    assert.deepEqual([formatElapsed(7.9), formatElapsed(750)], ['0:07', '12:30']);
  });
});
