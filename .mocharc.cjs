// The mocha settings of `npm test`. CODA_SKIP_REAL_TRAINERS=1 leaves the tests that run the real
// trainers' code (test/**/*-real.test.ts: LLaMA-Factory, OpenRLHF) out of the spec, for quick local runs.
module.exports = {
  spec: ['build/test/**/*.test.js'],
  ignore: process.env.CODA_SKIP_REAL_TRAINERS === '1' ? ['build/test/**/*-real.test.js'] : [],
  require: ['source-map-support/register', 'build/test/hooks.js'],
  timeout: 120000,
  slow: 5000,
  exit: true,
};
