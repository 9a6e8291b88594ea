import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { RolloutResult } from '../../core/rollout-types';
import { startScriptedServer, type ScriptedServer } from '../../doubles/openai-server';
import { startHarness, type Harness } from '../support/harness';
import { manifestOf, startRollout } from '../support/rollouts';

/** UI-TARS's replies, one per executor turn (the turns before come back as its history): a hover, a scroll without a point, then waits. */
const EXECUTOR_TURNS = [
  "Thought: Point at the console.\nAction: hover(start_box='(300,200)')",
  "Thought: Scroll the console down.\nAction: scroll(direction='down')",
];

describe('a scroll without a point in a rollout on a real desktop (scripted planner, UI-TARS replies set by the test)', function () {
  this.timeout(300_000);
  let h: Harness;
  let executor: ScriptedServer;

  before(async () => {
    // TEST DOUBLE of the UI-TARS endpoint: what it writes is set here; the scripted planner plays A-01.
    executor = await startScriptedServer((request) => {
      const turn = request.messages.filter((message) => message.role === 'assistant').length;
      return { texts: [EXECUTOR_TURNS[turn] ?? 'Thought: Wait for it.\nAction: wait()'] };
    });
    h = await startHarness({
      name: 'scroll-pointer',
      desktops: 1,
      displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 170),
      edit: (doc) => {
        doc.models.executor.baseUrl = executor.url;
      },
    });
    await h.startVmHost();
  });
  after(async () => {
    await h?.stop();
    await executor?.close();
  });

  it('turns the wheel where the pointer is, and records that point in the manifest', async () => {
    const result = (await (await startRollout(h, `r${Date.now()}`, 'A-01')).result()) as RolloutResult;
    const [hover, scroll] = (await manifestOf(h, result)).steps;
    assert.equal(hover?.action?.type, 'hover');
    const at = hover?.action?.type === 'hover' ? { x: hover.action.x, y: hover.action.y } : undefined;
    assert.notDeepEqual(at, { x: 960, y: 540 }, 'the hover is away from the centre of the screen');
    assert.match(scroll?.executor?.raw ?? '', /scroll\(direction='down'\)$/);
    assert.deepEqual(scroll?.action, { type: 'scroll', ...at, direction: 'down', amount: 5 });
    assert.equal(scroll?.error, undefined);
    // The real X pointer is still there: the scroll moved nothing.
    const display = h.config.hosts.find((host) => host.id === h.hostId);
    const said = execFileSync('xdotool', ['getmouselocation', '--shell'], { env: { ...process.env, DISPLAY: `:${display?.kind === 'local' ? display.displayBase : ''}` }, encoding: 'utf8' });
    assert.match(said, new RegExp(`^X=${at?.x}\nY=${at?.y}\n`));
  });
});
