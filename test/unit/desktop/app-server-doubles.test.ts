import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { celestiaDouble } from '../../../apps/celestia/double';
import { chimeraxDouble } from '../../../apps/chimerax/double';
import { gcmdKey, grassDouble } from '../../../apps/grassgis/double';
import { leanDouble } from '../../../apps/lean/double';
import { serverName, startKalgebraStateDouble } from '../../../apps/kalgebra/double';
import { freePort } from '../../../infra/ephemeral';

/** The app-server TEST DOUBLES answer as ScienceBoard's clients expect, and fail as the apps do. */

const call = async (port: number, method: string, route: string, body?: unknown, raw = false) => {
  const response = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    ...(body === undefined ? {} : { body: raw ? String(body) : JSON.stringify(body), headers: { 'content-type': raw ? 'text/plain' : 'application/json' } }),
  });
  return { status: response.status, text: await response.text() };
};

const refused = async (port: number) => {
  const err = await fetch(`http://127.0.0.1:${port}/version`).catch((e: unknown) => e);
  return err instanceof Error && (err.cause as { code?: string } | undefined)?.code === 'ECONNREFUSED';
};

describe('app-server test doubles', () => {
  it('KAlgebra: names each point of /func from its numbers as the request spells them, as the real server does', async () => {
    const cases: Array<[string, string]> = [
      ['-1', '-1'], ['-1.0', '-1.0'], ['33.0', '33.0'], ['-0.0', '-0.0'], ['-0', '0'], ['0', '0'], ['0.0', '0.0'], ['1.50', '1.5'],
      ['-23.18032786885246', '-23.18032786885246'], ['0.31085698061003864', '0.31085698061003864'], ['1e2', '100.0'], ['0.0001', '0.0001'],
      ['0.00001', '1e-05'], ['1.5e-7', '1.5e-07'], ['1e14', '100000000000000.0'], ['1e15', '1e+15'], ['12345678901234567890', '12345678901234567890'],
    ];
    for (const [spelled, name] of cases) assert.equal(serverName(spelled), name, spelled);
    const app = await startKalgebraStateDouble({ curves: { 'x->x-1': ([x = 0, y = 0]) => y - (x - 1) } });
    try {
      assert.equal(app.plot(2, 'x->x-1'), true);
      const answer = await call(app.port, 'POST', '/func/2d', '[[0, -1.0], [1, 0], [2, 1.5]]', true);
      assert.deepEqual(JSON.parse(answer.text), { color: '#000000', '(0, -1.0)': true, '(1, 0)': true, '(2, 1.5)': false });
    } finally {
      await app.close();
    }
  });

  it('Celestia: nothing listens before its launch; /version, /dump of the queried bodies only, 400 and 500 for bad bodies', async () => {
    const port = await freePort();
    const app = celestiaDouble(port, { time: { value: 1 }, entity: { Mars: { visible: true }, Sol: { visible: false } } });
    assert.equal(await refused(port), true);
    await app.launch();
    try {
      assert.deepEqual(await call(port, 'GET', '/version'), { status: 200, text: '0.1' });
      const dump = await call(port, 'POST', '/dump', JSON.stringify([{ name: 'Mars', type: 2 }, { name: 'Pluto', type: 2 }]), true);
      assert.deepEqual(JSON.parse(dump.text), { time: { value: 1 }, config: {}, entity: { Mars: { visible: true } } });
      assert.equal((await call(port, 'POST', '/dump', 'not json', true)).status, 400);
      assert.equal((await call(port, 'POST', '/dump', JSON.stringify({ name: 'Mars' }), true)).status, 500);
      assert.equal((await call(port, 'GET', '/nothing')).status, 404);
      app.fail({ kind: 'status', status: 503 });
      assert.equal((await call(port, 'GET', '/version')).status, 503);
    } finally {
      await app.quit();
    }
    assert.equal(await refused(port), true);
  });

  it('GRASS GIS: "OK" for init calls on its grassdata, 500 for a missing location or map, module runs by /gcmd, /quit exits with a 500', async () => {
    const port = await freePort();
    const app = grassDouble(port, { dump: { layers: [] }, gcmd: { [gcmdKey('v.db.select', { map: 'm' })]: { stdout: { info: {} } } } });
    await app.launch();
    try {
      assert.deepEqual(await call(port, 'POST', '/init/map', { grassdb: '/home/user/grassdata', location: 'natural_earth_dataset', mapset: 'PERMANENT' }), { status: 200, text: 'OK' });
      assert.deepEqual(await call(port, 'POST', '/init/layer', { query: { name: 'countries' } }), { status: 200, text: 'OK' });
      assert.equal((await call(port, 'POST', '/init/layer', { query: { name: 'railroads' } })).status, 500);
      assert.equal((await call(port, 'POST', '/init/map', { grassdb: '/home/user/grassdata', location: 'mars', mapset: 'PERMANENT' })).status, 500);
      assert.equal((await call(port, 'POST', '/init/scale', {})).status, 500);
      assert.deepEqual(await call(port, 'GET', '/init/cmd'), { status: 200, text: 'OK' });
      assert.deepEqual(app.initialized, ['map natural_earth_dataset/PERMANENT', 'layer countries', 'cmd']);
      assert.deepEqual(JSON.parse((await call(port, 'POST', '/gcmd', { cmd: 'v.db.select', kwargs: { map: 'm' } })).text), { stdout: { info: {} }, stderr: '', returncode: 0 });
      assert.equal((await call(port, 'POST', '/gcmd', { cmd: 'v.nothing', kwargs: {} })).status, 500);
      assert.equal((await call(port, 'POST', '/quit')).status, 500);
      // The app exits once its answer is out: from then on the connection is refused.
      let gone = false;
      for (let tries = 0; tries < 100 && !gone; tries++) {
        gone = await refused(port);
        if (!gone) await sleep(20);
      }
      assert.equal(gone, true);
    } finally {
      await app.quit();
    }
  });

  it('ChimeraX: no answer until launched, ChimeraX\'s JSON answers, a UserError for what it cannot do, states written into the VM', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'coda-chimerax-double-'));
    try {
      const app = chimeraxDouble(root, { states: { a: 1 }, info: { sel: ['x', 'y'] } });
      assert.equal(app.run('log clear'), undefined);
      app.launch();
      assert.deepEqual(app.run('open 2olx')?.error, null);
      assert.deepEqual(app.run('open 9zzz')?.error, { type: 'UserError', message: 'Fetch failed for 9zzz' });
      assert.deepEqual((app.run('info sel')?.['log messages'] as { note: string[] }).note, ['x\ny']);
      assert.equal((app.run('frobnicate') as { error: { type: string } }).error.type, 'UserError');
      assert.deepEqual(app.run('states /home/user/Downloads 17')?.error, null);
      assert.deepEqual(JSON.parse(readFileSync(path.join(root, 'home/user/Downloads/17.json'), 'utf8')), { a: 1 });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('Lean: builds an accepted proof, warns about sorry, fails on any other proof', () => {
    const lake = leanDouble(['exact h']);
    assert.deepEqual(lake.lake('import Mathlib\n\ntheorem t : p := by\n  exact h\n'), { returncode: 0, stdout: 'Build completed successfully.\n' });
    assert.match(lake.lake('theorem t : p := by\n  sorry\n').stdout, /declaration uses 'sorry'/);
    assert.equal(lake.lake('theorem t : p := by\n  simp\n').returncode, 1);
  });
});
