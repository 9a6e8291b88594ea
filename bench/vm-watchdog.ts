import * as vm from 'node:vm';
import { parseArgs } from 'node:util';

/**
 * What a call into a `vm` context costs with and without `timeout`, the way the Temporal SDK calls
 * into its workflow context (a reused context, `microtaskMode: 'afterEvaluate'`, `timeout` =
 * isolateExecutionTimeout, 5 s): with a timeout Node starts a watchdog thread for the call and
 * joins it on return. Wall and process CPU (the watchdog threads included) per call, each mode run
 * twice, alternating.
 *
 *   node build/bench/vm-watchdog.js [--calls 5000]
 */
function perCall(script: vm.Script, context: vm.Context, options: vm.RunningScriptOptions, calls: number): string {
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) script.runInContext(context, options);
  const cpu = process.cpuUsage(cpuBefore);
  const wallUs = Number(process.hrtime.bigint() - started) / 1000;
  return `${(wallUs / calls).toFixed(1)} µs wall, ${((cpu.user + cpu.system) / calls).toFixed(1)} µs CPU per call`;
}

function main(): void {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '5000' } } });
  const calls = Number(values.calls);
  const context = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
  const script = new vm.Script('1 + 1');
  for (let round = 1; round <= 2; round++) {
    console.log(`round ${round}, no timeout:   ${perCall(script, context, {}, calls)}`);
    console.log(`round ${round}, timeout 5 s:  ${perCall(script, context, { timeout: 5000 }, calls)}`);
  }
}

main();
