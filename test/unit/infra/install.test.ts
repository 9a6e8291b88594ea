import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readStageTimes } from '../../../cli/stage-times';
import { REPO_CONFIG } from '../../../infra/ephemeral';

const ROOT = path.dirname(REPO_CONFIG);
const STEPS = ['debian', 'node-modules', 'temporal', 'minio', 'kubernetes-tools', 'trainers', 'vm-python'] as const;
/** Where a step's script is, under infra/ (install-STEP.sh unless named here). */
const SCRIPTS: Partial<Record<(typeof STEPS)[number], string>> = { 'vm-python': 'vm-image/install-vm-python.sh' };

/** A package list of infra/install.sh (`NAME=(a b c)`). */
function packageList(name: string): string[] {
  const line = new RegExp(`^${name}=\\(([^)]*)\\)$`, 'm').exec(readFileSync(path.join(ROOT, 'infra', 'install.sh'), 'utf8'))?.[1];
  assert.ok(line !== undefined, `infra/install.sh has ${name}`);
  return line.trim().split(/\s+/);
}

/**
 * infra/install.sh in a scratch copy of infra/ whose step scripts are stand-ins that record their
 * arguments; `waitFor` makes a step wait (up to 60 s) for another to have started, so a step run
 * after the other instead of beside it times out.
 */
function scratchInstall(opts: { waitFor?: Partial<Record<(typeof STEPS)[number], readonly string[]>>; failing?: string } = {}) {
  const root = mkdtempSync(path.join(tmpdir(), 'coda-install-'));
  mkdirSync(path.join(root, 'infra', 'vm-image'), { recursive: true });
  copyFileSync(path.join(ROOT, 'infra', 'install.sh'), path.join(root, 'infra', 'install.sh'));
  const marks = path.join(root, 'marks');
  mkdirSync(marks);
  for (const step of STEPS) {
    const others = opts.waitFor?.[step] ?? [];
    const script = [
      '#!/usr/bin/env bash',
      `(cd "${marks}" && ls -1 | sed -n 's/\\.ended$//p') > "${marks}/${step}.before"`,
      `echo "$@" > "${marks}/${step}.started"`,
      `echo "[install-${step}] working"`,
      ...others.map((other) => `for i in $(seq 600); do [ -f "${marks}/${other}.started" ] && break; sleep 0.1; done; [ -f "${marks}/${other}.started" ] || { echo "${other} did not start beside ${step}"; exit 7; }`),
      opts.failing === step ? 'echo "the last words of a failure"; exit 3' : '',
      `touch "${marks}/${step}.ended"`,
    ].join('\n');
    writeFileSync(path.join(root, 'infra', SCRIPTS[step] ?? `install-${step}.sh`), script);
  }
  return {
    root,
    run: (...parts: string[]) => spawnSync('bash', [path.join(root, 'infra', 'install.sh'), ...parts], { env: { ...process.env, CODA_TIMES: path.join(root, 'times') }, encoding: 'utf8' }),
    ran: () => STEPS.filter((s) => existsSync(path.join(marks, `${s}.started`))),
    args: (step: string) => readFileSync(path.join(marks, `${step}.started`), 'utf8').trim().split(' '),
    /** The steps that had ended when `step` started. */
    endedBefore: (step: string) => readFileSync(path.join(marks, `${step}.before`), 'utf8').trim().split('\n').filter((l) => l !== '').sort(),
    times: () => readStageTimes(path.join(root, 'times')),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

describe('infra/install.sh: what each command installs', function () {
  this.timeout(120_000);

  it('installs for the demo the desktops\u2019 packages, Node and node_modules, Temporal and MinIO: not the trainers, Chromium, the TLS terminators, ImageMagick nor the Kubernetes tools', () => {
    const demo = packageList('DEMO_DEBIAN_PACKAGES');
    const test = packageList('TEST_DEBIAN_PACKAGES');
    for (const pkg of ['xvfb', 'kalgebra', 'texstudio', 'texlive-latex-extra']) assert.ok(demo.includes(pkg), pkg);
    // imagemagick: the screenshots' comparison with import; python3-*: the in-VM server the OSWorld client's contract test starts; qemu and mmdebstrap: the VM image and its VMs
    assert.deepEqual(test, ['chromium', 'stunnel4', 'haproxy', 'openssl', 'imagemagick', 'python3-flask', 'python3-xlib', 'python3-pil', 'python3-tk', 'python3-pip', 'python3-setuptools', 'python3-wheel', 'qemu-system-x86', 'qemu-utils', 'mmdebstrap']);
    const s = scratchInstall();
    try {
      const out = s.run('demo');
      assert.equal(out.status, 0, out.stderr);
      assert.deepEqual(s.ran(), ['debian', 'node-modules', 'temporal', 'minio']);
      assert.deepEqual(s.args('debian'), demo);
      assert.match(out.stderr, /\[install-minio\] working\n/);
      assert.deepEqual(
        s.times().map((t) => [t.phase, t.step, t.outcome]).sort(),
        [['install', 'debian', 'ok'], ['install', 'minio', 'ok'], ['install', 'node-modules', 'ok'], ['install', 'temporal', 'ok'], ['install', 'total', 'ok']],
      );
    } finally {
      s.remove();
    }
  });

  it('installs for the tests all of that and the test-only parts, the default with no part named', () => {
    for (const parts of [['test'], []]) {
      const s = scratchInstall();
      try {
        const out = s.run(...parts);
        assert.equal(out.status, 0, out.stderr);
        assert.deepEqual(s.ran(), [...STEPS]);
        assert.deepEqual(s.args('debian'), [...packageList('DEMO_DEBIAN_PACKAGES'), ...packageList('TEST_DEBIAN_PACKAGES')]);
      } finally {
        s.remove();
      }
    }
    const s = scratchInstall();
    try {
      assert.deepEqual([s.run('demo', 'trainers').status, s.ran()], [0, ['debian', 'node-modules', 'temporal', 'minio', 'trainers']]);
      const bad = s.run('everything');
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /unknown part "everything": expected demo, test, trainers or unit/);
    } finally {
      s.remove();
    }
  });

  it('installs for npm run test:unit Node with node_modules and the Temporal CLI only, side by side, and the script starts with it', () => {
    const both = ['node-modules', 'temporal'];
    const s = scratchInstall({ waitFor: { 'node-modules': both, temporal: both } });
    try {
      const out = s.run('unit');
      assert.equal(out.status, 0, out.stderr);
      assert.deepEqual(s.ran(), both);
      for (const step of both) assert.deepEqual(s.endedBefore(step), [], `${step} started with the other`);
      assert.deepEqual(s.times().map((t) => [t.step, t.outcome]).sort(), [['node-modules', 'ok'], ['temporal', 'ok'], ['total', 'ok']]);
      // With the test part, the unit part adds nothing and nothing runs twice.
      const again = scratchInstall();
      try {
        assert.deepEqual([again.run('test', 'unit').status, again.ran()], [0, [...STEPS]]);
      } finally {
        again.remove();
      }
    } finally {
      s.remove();
    }
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    assert.match(scripts['test:unit']!, /^bash infra\/install\.sh unit && npm run build && /);
  });

  it('runs one install at a time in a checkout: a second waits for the first to end, saying so', () => {
    const s = scratchInstall();
    try {
      const lock = path.join(s.root, '.tools', 'install.lock');
      mkdirSync(path.dirname(lock), { recursive: true });
      // flock(1) holds the lock, as a running install does, until it has written "released".
      const first = `flock "${lock}" bash -c 'touch "${s.root}/holding"; sleep 0.5; touch "${s.root}/released"'`;
      const out = spawnSync('bash', ['-c', `${first} & until [ -f "${s.root}/holding" ]; do sleep 0.05; done; bash "${s.root}/infra/install.sh" unit; status=$?; wait; exit $status`], { encoding: 'utf8' });
      assert.equal(out.status, 0, out.stderr);
      assert.match(out.stderr, /^\[install\] waiting for the install already running in this checkout\n/);
      assert.deepEqual(s.ran(), ['node-modules', 'temporal']);
      const released = statSync(path.join(s.root, 'released')).mtimeMs;
      for (const step of s.ran()) assert.ok(statSync(path.join(s.root, 'marks', `${step}.started`)).mtimeMs >= released, `${step} started after the first install ended`);
    } finally {
      s.remove();
    }
  });

  it('runs the apt, node_modules, Temporal, MinIO and trainer steps side by side, the Kubernetes tools after MinIO and Temporal, and the VM\'s python packages after apt', () => {
    // Each of the first five waits for all five to have started: run one after another, the first would time out.
    const first = ['debian', 'node-modules', 'temporal', 'minio', 'trainers'];
    const s = scratchInstall({ waitFor: Object.fromEntries(first.map((step) => [step, first])) });
    try {
      const out = s.run('test');
      assert.equal(out.status, 0, out.stderr);
      for (const step of first) assert.deepEqual(s.endedBefore(step), [], `${step} started with the others`);
      const before = s.endedBefore('kubernetes-tools');
      assert.ok(before.includes('minio') && before.includes('temporal'), `the Kubernetes tools started after ${before.join(', ')}`);
      const log = readFileSync(path.join(s.root, '.tools', 'install-logs', 'kubernetes-tools.log'), 'utf8');
      assert.equal(log, '[install-kubernetes-tools] working\n');
      assert.ok(s.endedBefore('vm-python').includes('debian'), 'the VM\'s python packages are built with apt\'s python3-pip');
      assert.match(s.args('vm-python')[0] ?? '', /\/vm-python$/);
    } finally {
      s.remove();
    }
  });

  it('ends with a failed step\u2019s name and the end of its log, after the other steps ended, and exits 1', () => {
    const s = scratchInstall({ failing: 'minio' });
    try {
      const out = s.run('demo');
      assert.equal(out.status, 1);
      assert.match(out.stderr, /\[install\] minio FAILED after \d+s; the end of \.tools\/install-logs\/minio\.log:\n\[install-minio\] working\nthe last words of a failure\n/);
      assert.match(out.stderr, /\[install\] failed after \d+s\n$/);
      assert.deepEqual(s.times().filter((t) => t.outcome !== 'ok').map((t) => t.step), ['minio', 'total']);
      for (const other of ['debian', 'node-modules', 'temporal']) assert.ok(existsSync(path.join(s.root, 'marks', `${other}.ended`)), other);
    } finally {
      s.remove();
    }
  });

  it('npm run demo installs the demo\u2019s part only, builds, then runs the demo with its options', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'coda-demo-sh-'));
    try {
      mkdirSync(path.join(root, 'infra'));
      copyFileSync(path.join(ROOT, 'infra', 'demo.sh'), path.join(root, 'infra', 'demo.sh'));
      const calls = path.join(root, 'calls');
      writeFileSync(path.join(root, 'infra', 'install.sh'), `echo "install $*" >> "${calls}"`);
      writeFileSync(path.join(root, 'infra', 'with-node.sh'), `echo "with-node $*" >> "${calls}"`);
      chmodSync(path.join(root, 'infra', 'demo.sh'), 0o755);
      const out = spawnSync('bash', [path.join(root, 'infra', 'demo.sh'), '--full', '--k', '2'], { encoding: 'utf8', env: { ...process.env, CODA_TIMES: path.join(root, 'times') } });
      assert.equal(out.status, 0, out.stderr);
      assert.deepEqual(readFileSync(calls, 'utf8').trim().split('\n'), ['install demo', 'with-node node_modules/.bin/tsc -p .', `with-node node ${root}/build/cli/demo.js --full --k 2`]);
      assert.deepEqual(readStageTimes(path.join(root, 'times')).map((t) => [t.phase, t.step]), [['build', 'tsc']]);
      const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
      assert.equal(scripts.demo, 'bash infra/demo.sh');
      assert.match(scripts.test!, /^bash infra\/install\.sh test && /);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
