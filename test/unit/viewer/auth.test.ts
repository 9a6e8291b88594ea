import assert from 'node:assert/strict';
import { loadConfig } from '../../../config/load';
import { ValidationError } from '../../../core/validation';
import { authorized, isLoopback, viewerLogin } from '../../../viewer/auth';
import { REPO_CONFIG } from '../../../infra/ephemeral';

/** The viewer's login without a server (test/viewer/auth.test.ts: a viewer behind it on real S3 and Temporal). */
const TOKEN = 'viewer-test-token-3f9a1c7e5b';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('viewer login: the token, its variable and where the viewer may run without it', () => {
  const config = loadConfig(REPO_CONFIG, {});

  it('reads the token from the variable viewer.auth.tokenEnv names, CODA_VIEWER_TOKEN by default', () => {
    assert.equal(config.viewer.auth.tokenEnv, 'CODA_VIEWER_TOKEN');
    assert.deepEqual(viewerLogin(config, '0.0.0.0', { CODA_VIEWER_TOKEN: TOKEN }), { kind: 'token', token: TOKEN, tokenEnv: 'CODA_VIEWER_TOKEN' });
    const renamed = { viewer: { ...config.viewer, auth: { tokenEnv: 'LAB_VIEWER_SECRET' } } };
    assert.equal(viewerLogin(renamed, '0.0.0.0', { LAB_VIEWER_SECRET: TOKEN, CODA_VIEWER_TOKEN: 'another-token-entirely' }).kind, 'token');
  });

  it('refuses to listen beyond loopback without a token, naming the field and the variable; runs open on loopback with a warning', () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'viewer.lab.example']) {
      assert.throws(
        () => viewerLogin(config, host, {}),
        (err: ValidationError) => err instanceof ValidationError && /viewer\.auth\.tokenEnv: environment variable CODA_VIEWER_TOKEN is not set/.test(err.message) && err.message.includes(host),
        host,
      );
    }
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost']) {
      const login = viewerLogin(config, host, { CODA_VIEWER_TOKEN: '' });
      assert.equal(login.kind, 'open', host);
      assert.match(login.kind === 'open' ? login.warning : '', /no login \(CODA_VIEWER_TOKEN is not set/);
    }
    assert.ok(!isLoopback('128.0.0.1') && !isLoopback('::ffff:10.0.0.1'));
    assert.throws(() => viewerLogin(config, '127.0.0.1', { CODA_VIEWER_TOKEN: 'short' }), /the token in CODA_VIEWER_TOKEN has 5 characters; expected at least 16/);
  });

  it('trims the token its variable holds (a secret file ends in a newline), so Bearer and Basic match it; refuses whitespace inside it', () => {
    for (const padded of [`${TOKEN}\n`, `${TOKEN} `, `\t${TOKEN}\r\n`]) {
      const login = viewerLogin(config, '0.0.0.0', { CODA_VIEWER_TOKEN: padded });
      assert.deepEqual(login, { kind: 'token', token: TOKEN, tokenEnv: 'CODA_VIEWER_TOKEN' }, JSON.stringify(padded));
      assert.ok(authorized(`Bearer ${TOKEN}`, login.token) && authorized(basic('me', TOKEN), login.token), JSON.stringify(padded));
    }
    for (const inner of ['viewer-test token-3f9a1c7e5b', 'viewer-test\ttoken-3f9a1c7e5b']) {
      assert.throws(
        () => viewerLogin(config, '0.0.0.0', { CODA_VIEWER_TOKEN: `${inner}\n` }),
        (err: ValidationError) => err instanceof ValidationError && /viewer\.auth\.tokenEnv: the token in CODA_VIEWER_TOKEN has whitespace inside it \(character 12\)/.test(err.message),
        JSON.stringify(inner),
      );
    }
    assert.throws(() => viewerLogin(config, '127.0.0.1', { CODA_VIEWER_TOKEN: ' \n' }), /the token in CODA_VIEWER_TOKEN has 0 characters; expected at least 16/);
  });

  it('takes the token as Bearer or as Basic\u2019s password with any user name, and nothing else', () => {
    assert.ok(authorized(`Bearer ${TOKEN}`, TOKEN));
    assert.ok(authorized(`bearer   ${TOKEN}`, TOKEN));
    assert.ok(authorized(basic('anyone', TOKEN), TOKEN));
    assert.ok(authorized(basic('', TOKEN), TOKEN));
    assert.ok(authorized(basic('a:b', TOKEN), TOKEN) === false, 'the password is what follows the first colon');
    for (const header of [undefined, '', TOKEN, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer ', basic(TOKEN, 'wrong-password-123456'), `Basic ${TOKEN}`, `Token ${TOKEN}`]) {
      assert.equal(authorized(header, TOKEN), false, String(header));
    }
  });
});
