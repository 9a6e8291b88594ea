import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { createObjectStore, ObjectStore } from '../../activities/storage/object-store';
import { testStack } from '../stack';

describe('ObjectStore against the real MinIO', () => {
  const prefix = `test/object-store/${Date.now()}`;

  it('puts, gets, lists, checks and deletes objects', async () => {
    const { store } = await testStack();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);
    await store.put(`${prefix}/a/screenshot.png`, png, 'image/png');
    await store.putJson(`${prefix}/a/record.json`, { step: 1, thought: 'click "OK"' });
    await store.put(`${prefix}/b.txt`, 'plain text');

    assert.deepEqual(await store.get(`${prefix}/a/screenshot.png`), png);
    assert.deepEqual(await store.getJson(`${prefix}/a/record.json`), { step: 1, thought: 'click "OK"' });
    assert.deepEqual(await store.list(`${prefix}/`), [`${prefix}/a/record.json`, `${prefix}/a/screenshot.png`, `${prefix}/b.txt`]);
    assert.deepEqual(await store.list(`${prefix}/a/`), [`${prefix}/a/record.json`, `${prefix}/a/screenshot.png`]);
    assert.equal(await store.exists(`${prefix}/b.txt`), true);

    await store.delete(`${prefix}/b.txt`);
    assert.equal(await store.exists(`${prefix}/b.txt`), false);
    assert.equal(await store.tryGet(`${prefix}/b.txt`), undefined);
    await assert.rejects(store.get(`${prefix}/b.txt`), (err: Error) => err.name === 'NoSuchKey');
  });

  it('lists across pages', async () => {
    const { store } = await testStack();
    const keys = Array.from({ length: 7 }, (_, i) => `${prefix}/pages/${String(i).padStart(2, '0')}`);
    await Promise.all(keys.map((key) => store.put(key, key)));
    assert.deepEqual(await store.list(`${prefix}/pages/`, 3), keys);
  });

  it('uploads files from disk in one PUT or in parts, and downloads them to disk', async () => {
    const { store } = await testStack();
    const dir = mkdtempSync(path.join(tmpdir(), 'coda-files-'));
    try {
      const MiB = 1024 * 1024;
      const small = randomBytes(1000);
      const large = randomBytes(11 * MiB + 17); // three parts of 5 MiB (MinIO's smallest part), the last one short
      writeFileSync(path.join(dir, 'small.bin'), small);
      writeFileSync(path.join(dir, 'large.bin'), large);
      await store.putFile(`${prefix}/files/small.bin`, path.join(dir, 'small.bin'), 5 * MiB);
      await store.putFile(`${prefix}/files/large.bin`, path.join(dir, 'large.bin'), 5 * MiB);
      assert.deepEqual(await store.get(`${prefix}/files/small.bin`), small);
      await store.getFile(`${prefix}/files/large.bin`, path.join(dir, 'out', 'nested', 'large.bin'));
      assert.ok(readFileSync(path.join(dir, 'out', 'nested', 'large.bin')).equals(large));
      await assert.rejects(store.getFile(`${prefix}/files/missing.bin`, path.join(dir, 'missing.bin')), (err: Error) => err.name === 'NoSuchKey');
      assert.equal(existsSync(path.join(dir, 'missing.bin')), false, 'a failed download leaves no file');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file deleted while it uploads (a trainer rotating checkpoints): each upload completes from the open file or fails with ENOENT, and nothing else breaks', async () => {
    const { store } = await testStack();
    const dir = mkdtempSync(path.join(tmpdir(), 'coda-putfile-gone-'));
    try {
      const files = Array.from({ length: 200 }, (_, i) => path.join(dir, `f${i}.bin`));
      for (const file of files) writeFileSync(file, randomBytes(4096));
      // The uploads start; the files go while they are being stat'ed, opened and read (real MinIO, real files).
      const uploads = files.map((file, i) => store.putFile(`${prefix}/gone/${i}.bin`, file).then(() => 'uploaded', (err: NodeJS.ErrnoException) => err.code));
      await new Promise((resolve) => setImmediate(resolve));
      for (const file of files) rmSync(file);
      const outcomes = await Promise.all(uploads);
      assert.deepEqual([...new Set(outcomes)].filter((o) => o !== 'uploaded' && o !== 'ENOENT'), [], outcomes.join(' '));
      for (const [i, outcome] of outcomes.entries()) if (outcome === 'uploaded') assert.equal((await store.get(`${prefix}/gone/${i}.bin`)).length, 4096);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('creates a missing bucket, idempotently', async () => {
    const { config, env } = await testStack();
    const other = createObjectStore({ ...config.storage, bucket: `coda-test-${Date.now()}` }, env);
    await other.ensureBucket();
    await other.ensureBucket();
    await other.put('k', 'v');
    assert.equal((await other.get('k')).toString(), 'v');
  });

  it('fails with a clear error when the storage credentials are not set', async () => {
    const { config } = await testStack();
    assert.throws(
      () => createObjectStore(config.storage, {}),
      /storage\.accessKeyIdEnv: environment variable CODA_S3_ACCESS_KEY_ID is not set/,
    );
  });

  it('rejects wrong credentials (the server really checks them)', async () => {
    const { config } = await testStack();
    const client = new S3Client({
      endpoint: config.storage.endpoint,
      region: config.storage.region,
      forcePathStyle: true,
      credentials: { accessKeyId: 'nobody', secretAccessKey: 'wrong-secret' },
    });
    await assert.rejects(new ObjectStore(client, config.storage.bucket).list(''), /Access Key Id|InvalidAccessKeyId/);
  });
});
