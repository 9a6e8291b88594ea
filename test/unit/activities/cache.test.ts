import assert from 'node:assert/strict';
import { PromiseCache } from '../../../activities/cache';

describe('PromiseCache', () => {
  it('shares one load between concurrent readers and keeps its value', async () => {
    const cache = new PromiseCache<string>();
    let loads = 0;
    const load = async () => `value ${++loads}`;
    const [a, b] = await Promise.all([cache.get('k', load), cache.get('k', load)]);
    assert.deepEqual([a, b, await cache.get('k', load), loads], ['value 1', 'value 1', 'value 1', 1]);
  });

  it('forgets a failed load, so the next reader loads again', async () => {
    const cache = new PromiseCache<string>();
    await assert.rejects(cache.get('k', () => Promise.reject(new Error('S3 down'))), /S3 down/);
    assert.equal(await cache.get('k', async () => 'back'), 'back');
  });

  it('drops the oldest entry past its limit, and set() counts as a use', async () => {
    const cache = new PromiseCache<number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);
    cache.set('c', 3);
    const reload = async () => -1;
    assert.deepEqual([await cache.get('a', reload), await cache.get('c', reload), await cache.get('b', reload)], [10, 3, -1]);
  });
});
