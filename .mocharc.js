// The whole suite: every test file, in two worker processes (mocha --parallel) sharing one Temporal
// dev server and one MinIO that test/global.ts starts once (CODA_TEST_JOBS sets the number of
// workers). Files are handed out slowest first by test/file-times.json (each file's seconds in a
// recent run; files it does not name last), so the long ones start early and the short ones fill the gaps.
// The real-trainer tests (test/**/real-*.test.ts: LLaMA-Factory, TRL and OpenRLHF's own code on
// CPU, from .tools/trainers) are left out of the run, not skipped, when CODA_SKIP_REAL_TRAINERS=1,
// so a local run without them never reports them as passing (docs/real-trainers.md).
const { readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

const jobs = Number(process.env.CODA_TEST_JOBS ?? 2);
process.env.CODA_TEST_JOBS = String(jobs);

// A young generation of 64 MB semi-spaces for the workers and every Node process they start (16 MB
// by default): the desktops' screenshots and the servers' buffers are short-lived, and fewer
// scavenges promote fewer of them. The learning loop's test (a), twice each way back to back:
// 266 and 274 CPU-s against 278 and 282 (docs/tests.md).
const SEMI_SPACE = '--max-semi-space-size=64';
if (!(process.env.NODE_OPTIONS ?? '').includes('--max-semi-space-size')) {
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, SEMI_SPACE].filter(Boolean).join(' ');
}

/** build/test/**\/*.test.js, relative to the repository, slowest first by the recorded times. */
function specInOrder() {
  let files;
  try {
    files = readdirSync(path.join(__dirname, 'build', 'test'), { recursive: true })
      .filter((f) => f.endsWith('.test.js'))
      .map((f) => path.join('build', 'test', f));
  } catch {
    return ['build/test/**/*.test.js']; // not built yet: mocha says so
  }
  let recorded = {};
  try {
    recorded = JSON.parse(readFileSync(path.join(__dirname, 'test', 'file-times.json'), 'utf8'));
  } catch {
    /* no record yet: the files' own order */
  }
  const seconds = (f) => recorded[f] ?? 0;
  return files.sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));
}

/** Files named on the command line (`npx mocha build/test/x.test.js`) are the run; mocha would add the spec to them. */
const named = process.argv.slice(2).some((arg) => !arg.startsWith('-') && arg.endsWith('.test.js'));

module.exports = {
  ...(named ? {} : { spec: specInOrder() }),
  ...(process.env.CODA_SKIP_REAL_TRAINERS === '1' ? { ignore: ['build/test/**/real-*.test.js'] } : {}),
  require: ['source-map-support/register', 'build/test/hooks.js', 'build/test/global.js'],
  parallel: jobs > 1,
  jobs,
  timeout: 120000,
  slow: 5000,
  exit: true,
};
