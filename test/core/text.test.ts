import assert from 'node:assert/strict';
import { truncate } from '../../core/text';

describe('truncate', () => {
  it('keeps a text that fits and cuts a longer one to the bound, ellipsis included', () => {
    assert.equal(truncate('abc', 3), 'abc');
    assert.equal(truncate('abcd', 3), 'ab…');
    assert.equal(truncate('abcd', 3).length, 3);
  });
});
