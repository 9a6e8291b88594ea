// The unit tier (npm run test:unit): the files under build/test/core, client and unit, slowest
// first as the whole suite hands them out (.mocharc.js), sharing one Temporal dev server in memory
// that test/unit-global.ts starts once. No MinIO. Three worker processes (CODA_TEST_JOBS sets
// another number): the tier waits on its server and its timers more than it computes, so a third
// worker fills the two cores (docs/tests.md).
process.env.CODA_TEST_JOBS ??= '3';
const suite = require('./.mocharc.js');

const TIERS = ['core', 'client', 'unit'];
const inTier = (file) => TIERS.some((tier) => file.startsWith(`build/test/${tier}/`));
/** The suite's files of the tier, in its order; the tier's globs before the build (mocha says there is nothing). */
function spec() {
  if (suite.spec === undefined) return {}; // files named on the command line
  if (suite.spec.some((file) => file.includes('*'))) return { spec: TIERS.map((tier) => `build/test/${tier}/**/*.test.js`) };
  return { spec: suite.spec.filter(inTier) };
}

module.exports = {
  ...suite,
  ...spec(),
  require: ['source-map-support/register', 'build/test/hooks.js', 'build/test/unit-global.js'],
};
