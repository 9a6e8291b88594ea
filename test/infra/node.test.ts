import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_CONFIG } from '../stack';

const ROOT = path.dirname(REPO_CONFIG);
const INSTALL_NODE = path.join(ROOT, 'infra', 'install-node.sh');
const PROJECT_NODE_BIN = path.join(ROOT, '.tools', 'node24', 'bin');
const BUILD = path.resolve(__dirname, '..', '..');

/** The Node version infra/install-node.sh pins (NODE_VERSION="24.x.y"). */
function pinnedNode(script = readFileSync(INSTALL_NODE, 'utf8')): string {
  const version = /^NODE_VERSION="(\d+\.\d+\.\d+)"$/m.exec(script)?.[1];
  assert.ok(version !== undefined, 'infra/install-node.sh pins NODE_VERSION');
  return version;
}

const major = (version: string): number => Number(version.replace(/^v/, '').split('.')[0]);

/** PATH without the project's Node: what the machine offers on its own. */
const machinePath = (): string =>
  (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir !== '' && path.resolve(dir) !== PROJECT_NODE_BIN)
    .join(path.delimiter);

/** The machine's own Node version, or undefined when it has none. */
function machineNode(): string | undefined {
  const out = spawnSync('node', ['-p', 'process.versions.node'], { env: { ...process.env, PATH: machinePath() }, encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : undefined;
}

describe('Node: the version everything runs on', () => {
  it("runs the suite on the project's Node: at least package.json's engines floor, and install-node.sh's pinned binary where it installed one", () => {
    const engines = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const floor = /^>=(\d+)$/.exec(engines)?.[1];
    assert.equal(floor, '22', `engines.node is ${engines}`);
    assert.ok(major(process.version) >= Number(floor), `the suite runs on Node ${process.version}, below engines ${engines}: run it with npm test (infra/with-node.sh)`);
    if (existsSync(path.join(PROJECT_NODE_BIN, 'node'))) {
      assert.equal(realpathSync(process.execPath), realpathSync(path.join(PROJECT_NODE_BIN, 'node')), 'mocha runs on .tools/node24/bin/node');
      assert.equal(process.version, `v${pinnedNode()}`);
    } else {
      assert.ok(major(process.version) >= major(pinnedNode()), `no .tools/node24, so the machine's Node ${process.version} must be ${major(pinnedNode())} or newer`);
    }
  });

  it("prints no AWS SDK Node-version warning from an object store made on the project's Node", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, CODA_S3_ACCESS_KEY_ID: 'key', CODA_S3_SECRET_ACCESS_KEY: 'secret' };
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    const script = `
      const { loadConfig } = require(${JSON.stringify(path.join(BUILD, 'config', 'load.js'))});
      const { createObjectStore } = require(${JSON.stringify(path.join(BUILD, 'activities', 'storage', 'object-store.js'))});
      const config = loadConfig(${JSON.stringify(REPO_CONFIG)}, process.env);
      console.log(createObjectStore(config.storage, process.env).bucket);`;
    const out = spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'coda');
    assert.doesNotMatch(out.stderr, /NodeVersionSupportWarning|require node >=/);
  });

  it("install-node.sh installs the pinned Node 24 from the npm registry where the machine's Node is older, refuses a tarball whose sha512 is not the pinned one, and does nothing on a newer Node", function () {
    this.timeout(300_000);
    const scratch = mkdtempSync(path.join(tmpdir(), 'coda-install-node-'));
    try {
      const install = (script: string, tools: string) => spawnSync('bash', [script, tools], { env: { ...process.env, PATH: machinePath() }, encoding: 'utf8' });
      const machine = machineNode();
      const tools = path.join(scratch, 'tools');
      const first = install(INSTALL_NODE, tools);
      assert.equal(first.status, 0, first.stderr);
      if (machine !== undefined && major(machine) >= major(pinnedNode())) {
        assert.equal(existsSync(path.join(tools, 'node24')), false, `the machine's Node ${machine} is new enough: nothing installed`);
        return;
      }
      const installed = spawnSync(path.join(tools, 'node24', 'bin', 'node'), ['-p', 'process.version'], { encoding: 'utf8' });
      assert.equal(installed.stdout.trim(), `v${pinnedNode()}`, `over the machine's Node ${machine ?? '(none)'}`);
      const again = install(INSTALL_NODE, tools);
      assert.equal(again.status, 0, again.stderr);
      assert.equal(again.stderr, '', 'a second run finds it installed and does nothing');

      // The same script with one character of the pinned digest changed: it must refuse and install nothing.
      const text = readFileSync(INSTALL_NODE, 'utf8');
      const pin = /^NODE_INTEGRITY="sha512-(.)/m.exec(text);
      assert.ok(pin !== null, 'infra/install-node.sh pins NODE_INTEGRITY');
      const tampered = text.replace(pin[0], pin[0].slice(0, -1) + (pin[1] === 'A' ? 'B' : 'A'));
      mkdirSync(path.join(scratch, 'infra'));
      const script = path.join(scratch, 'infra', 'install-node.sh');
      writeFileSync(script, tampered);
      const otherTools = path.join(scratch, 'other-tools');
      const refused = install(script, otherTools);
      assert.equal(refused.status, 1);
      assert.match(refused.stderr, /sha512 [0-9a-f]{128} is not the pinned [0-9a-f]{128}; nothing installed/);
      assert.equal(existsSync(path.join(otherTools, 'node24')), false);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
