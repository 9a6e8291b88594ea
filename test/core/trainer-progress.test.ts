import assert from 'node:assert/strict';
import { parseGlobalStepLine, parseTrainerLogLine, trainerLogProgress } from '../../core/trainer-progress';

describe('trainer progress lines', () => {
  it("reads OpenRLHF's Global step line: a Python dict behind Ray's prefix", () => {
    const line =
      "(PPOTrainer pid=4121) INFO 11-23 17:42:15 ppo_trainer.py:547] ✨ Global step 12: {'policy_loss': -0.0123, 'actor_lr': 1e-06, " +
      "'kl': 0.0, 'rollout/reward_mean': 1.5, 'timing/generation': 3.25, 'dynamic_filtering_pass_rate': None, 'entropy_loss': nan, 'return': -inf, 'flag': True, 'note': 'a: nan, b'}";
    assert.deepEqual(parseGlobalStepLine(line), {
      step: 12,
      metrics: { policy_loss: -0.0123, actor_lr: 1e-6, kl: 0, 'rollout/reward_mean': 1.5, 'timing/generation': 3.25 },
    });
  });

  it('ignores every other line, and a dict it cannot read', () => {
    for (const line of ['', 'Generate samples: 100%|##########| 4/4', '✨ Evaluation completed in 0:00:03, global_step 3, eval_metrics: {}', "Global step 3: {'a': }", 'Global step 3: [1, 2]']) {
      assert.equal(parseGlobalStepLine(line), undefined, line);
    }
  });

  it("reads LLaMA-Factory's trainer_log.jsonl lines", () => {
    const line = JSON.stringify({ current_steps: 4, total_steps: 10, loss: 1.25, lr: 9.5e-6, epoch: 0.4, percentage: 40, elapsed_time: '0:00:08', remaining_time: '0:00:12' });
    assert.deepEqual(parseTrainerLogLine(line), { step: 4, totalSteps: 10, metrics: { loss: 1.25, lr: 9.5e-6, epoch: 0.4, percentage: 40 } });
    assert.deepEqual(parseTrainerLogLine('{"current_steps": 2}'), { step: 2, metrics: {} });
    for (const bad of ['', 'not json', '[1]', '{"total_steps": 3}', '{"current_steps": 1.5}']) assert.equal(parseTrainerLogLine(bad), undefined, bad);
  });

  it("a trainer_log.jsonl's progress: the step of its last line, the figures of its last line with a loss (the real run's last lines)", () => {
    // The last two lines of a real LLaMA-Factory 0.9.5 run (docs/real-trainers.md): the last step, then the end-of-training summary.
    const log = [
      '{"current_steps": 5, "total_steps": 6, "loss": 6.041893005371094, "lr": 3.4549150281252635e-06, "epoch": 2.6153846153846154, "percentage": 83.33, "elapsed_time": "0:05:44", "remaining_time": "0:01:08"}',
      '{"current_steps": 6, "total_steps": 6, "loss": 6.033022880554199, "lr": 9.549150281252633e-07, "epoch": 3.0, "percentage": 100.0, "elapsed_time": "0:06:30", "remaining_time": "0:00:00"}',
      '{"current_steps": 6, "total_steps": 6, "epoch": 3.0, "percentage": 100.0, "elapsed_time": "0:06:30", "remaining_time": "0:00:00"}',
      '',
    ].join('\n');
    assert.deepEqual(trainerLogProgress(log), { step: 6, totalSteps: 6, metrics: { loss: 6.033022880554199, lr: 9.549150281252633e-7, epoch: 3, percentage: 100 } });
    // After a resume with no steps left, the summary is the only line: its figures, without a loss.
    assert.deepEqual(trainerLogProgress(log.split('\n')[2]!), { step: 6, totalSteps: 6, metrics: { epoch: 3, percentage: 100 } });
    // Mid-run, the last line is a step's.
    assert.deepEqual(trainerLogProgress(log.split('\n')[0]!)?.metrics.loss, 6.041893005371094);
    assert.equal(trainerLogProgress('not json\n'), undefined);
  });
});
