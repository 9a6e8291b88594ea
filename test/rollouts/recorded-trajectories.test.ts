import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { attemptOfManifest } from '../../core/keys';
import { parseTrajectoryManifest } from '../../apps/manifests';
import { testStack, type TestStack } from '../stack';
import { loadRecording, readRecording, recordingDir, relocated, runRoot, StaleRecordingError, type Recording } from '../support/recorded';

/**
 * The recorded real trajectories (test/fixtures/trajectories/) as the files that read them get
 * them: uploaded under a run of the test's own, every key and byte what the recorder wrote, and a
 * recording the code no longer reads refused with the command that refreshes it.
 */
describe('recorded real trajectories: loaded as the live run wrote them, refused when stale', function () {
  this.timeout(120_000);
  const NAME = 'judging';
  const run = `recplay${Date.now().toString(36)}`;
  let stack: TestStack;
  let scratch: string;

  before(async () => {
    stack = await testStack();
    scratch = mkdtempSync(path.join(tmpdir(), 'coda-recordings-'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  const sha256 = (body: Buffer): string => createHash('sha256').update(body).digest('hex');
  /** A copy of the recording to spoil, and its recording.json. */
  const copy = (label: string): { root: string; dir: string; json: Recording } => {
    const root = path.join(scratch, label);
    cpSync(recordingDir(NAME), path.join(root, NAME), { recursive: true });
    const dir = path.join(root, NAME);
    return { root, dir, json: JSON.parse(readFileSync(path.join(dir, 'recording.json'), 'utf8')) as Recording };
  };
  const refused = async (root: string, why: RegExp): Promise<void> => {
    const target = { prefix: stack.config.storage.prefix, run: `${run}-${path.basename(root)}` };
    await assert.rejects(loadRecording(stack.store, NAME, target, root), (err: unknown) => {
      assert.ok(err instanceof StaleRecordingError, String(err));
      assert.match(err.message, new RegExp(`^recording "${NAME}" \\(.+\\) is stale: ${why.source}`));
      assert.match(err.message, /Refresh it with the recorder: npm run record:trajectories -- judging$/);
      return true;
    });
    assert.deepEqual(await stack.store.list(runRoot(target.prefix, target.run)), [], 'nothing of a stale recording is uploaded');
  };

  it('uploads every recorded object under the test run, with the keys and bytes the recorder wrote, the run renamed in what names it', async () => {
    const { recording } = readRecording(NAME);
    const prefix = stack.config.storage.prefix;
    const written = await loadRecording(stack.store, NAME, { prefix, run });
    const root = runRoot(prefix, run);
    assert.deepEqual((await stack.store.list(root)).sort(), recording.objects.map((o) => `${root}${o.key}`).sort());
    assert.deepEqual(written.sort(), recording.objects.map((o) => `${root}${o.key}`).sort());
    let images = 0;
    for (const object of recording.objects) {
      const body = await stack.store.get(`${root}${object.key}`);
      // Renamed back to the recorded run, every object is byte for byte what the recorder wrote.
      const back = relocated({ ...recording, prefix, run }, object, body, recording.prefix, recording.run);
      assert.equal(sha256(back), object.sha256, object.key);
      if (object.contentType === 'image/png') {
        images += 1;
        assert.equal(sha256(body), object.sha256, `${object.key}: screenshots are the recorded pixels`);
      }
    }
    assert.ok(images > 0, 'the recording holds screenshots');
    // Recordings are checked in: each stays well under 20 MB.
    const bytes = recording.objects.reduce((a, o) => a + o.bytes, 0);
    assert.ok(bytes < 10e6, `recording ${NAME} holds ${bytes} bytes`);
    const manifests = recording.objects.filter((o) => o.key.endsWith('/manifest.json'));
    assert.equal(manifests.length, 10);
    for (const object of manifests) {
      const key = `${root}${object.key}`;
      const manifest = parseTrajectoryManifest(await stack.store.getJson(key), key);
      assert.equal(manifest.run, run);
      assert.deepEqual(attemptOfManifest(prefix, key).run, run);
      for (const shot of [manifest.initialScreenshotKey, ...manifest.steps.map((s) => s.screenshotKey)]) assert.ok(await stack.store.exists(shot), shot);
      assert.doesNotMatch(JSON.stringify(manifest), new RegExp(recording.run), 'nothing names the recorded run');
    }
  });

  it('refuses a recording made under another recording format', async () => {
    const spoilt = copy('format');
    writeFileSync(path.join(spoilt.dir, 'recording.json'), JSON.stringify({ ...spoilt.json, format: 'coda.recording/0' }));
    await refused(spoilt.root, /recording\.json has format "coda\.recording\/0", this code reads coda\.recording\/1/);
  });

  it('refuses a recording made under another key scheme', async () => {
    const spoilt = copy('keys');
    const keyScheme = { ...spoilt.json.keyScheme, screenshot: 'PREFIX/runs/RUN/SOFTWARE/TASK/7/steps/3/screen.png' };
    writeFileSync(path.join(spoilt.dir, 'recording.json'), JSON.stringify({ ...spoilt.json, keyScheme }));
    await refused(spoilt.root, /the key scheme changed: core\/keys\.ts now gives the screenshot key PREFIX\/runs\/RUN\/SOFTWARE\/TASK\/7\/steps\/0003\/screenshot\.png, the recording was made when it was PREFIX\/runs\/RUN\/SOFTWARE\/TASK\/7\/steps\/3\/screen\.png/);
  });

  it("refuses a trajectory manifest today's parser does not read, even with its checksum updated", async () => {
    const spoilt = copy('manifest');
    const object = spoilt.json.objects.find((o) => o.key.endsWith('/manifest.json'))!;
    const file = path.join(spoilt.dir, 'objects', object.key);
    const body = Buffer.from(JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), schema: 'coda.trajectory/0' }));
    writeFileSync(file, body);
    const objects = spoilt.json.objects.map((o) => (o === object ? { ...o, bytes: body.length, sha256: sha256(body) } : o));
    writeFileSync(path.join(spoilt.dir, 'recording.json'), JSON.stringify({ ...spoilt.json, objects }));
    await refused(spoilt.root, new RegExp(`${object.key.replaceAll('.', '\\.')} does not read as today's trajectory manifest`));
  });

  it('refuses objects that are not what the recorder wrote: changed bytes, a file missing, a file it did not list', async () => {
    const changed = copy('bytes');
    const shot = changed.json.objects.find((o) => o.contentType === 'image/png')!;
    const file = path.join(changed.dir, 'objects', shot.key);
    const bytes = readFileSync(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1);
    writeFileSync(file, bytes);
    await refused(changed.root, new RegExp(`objects/${shot.key.replaceAll('.', '\\.')} is not what the recorder wrote`));

    const missing = copy('missing');
    rmSync(path.join(missing.dir, 'objects', shot.key));
    await refused(missing.root, new RegExp(`objects/${shot.key.replaceAll('.', '\\.')} is missing`));

    const extra = copy('extra');
    writeFileSync(path.join(extra.dir, 'objects', 'KAlgebra', 'stray.json'), '{}');
    await refused(extra.root, /objects\/ holds files recording\.json does not list: KAlgebra\/stray\.json/);
  });
});
