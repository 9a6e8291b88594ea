import assert from 'node:assert/strict';
import { freeIdentifiers, splitAssignment, splitEquation, splitLambda } from '../../apps/kalgebra/expressions';
import { withKeysForControls, xdotoolArgs, xdotoolCalls } from '../../activities/desktop/local/input';
import { calgebra, parseCalgebraOutput } from '../../apps/kalgebra/local/calgebra';
import { realPart, sameValue } from '../../apps/kalgebra/local/evaluators';
import {
  agrees,
  analitzaNumber,
  functionForm,
  parsePointKey,
  pointQueries,
  printedNumber,
  type Dimension,
} from '../../apps/kalgebra/local/plot-points';

const run = (lines: readonly string[]) => calgebra(lines, { binary: 'calgebra', env: { PATH: process.env.PATH ?? '/usr/bin' }, timeoutMs: 10_000 });

/** Whether `point` lies on `expression` as the eqn check decides it, with the real calgebra. */
async function onPlot(expression: string, point: number[], dimension: Dimension): Promise<boolean> {
  const [bare] = await run([expression]);
  assert.ok(bare?.ok, `calgebra evaluates ${expression}`);
  const [found, expected] = await run(pointQueries(functionForm(expression, bare.value, dimension), point, dimension));
  const a = printedNumber(found?.ok ? found.value : '');
  const b = printedNumber(expected?.ok ? expected.value : '');
  return a !== undefined && b !== undefined && agrees(a, b);
}

describe('KAlgebra expressions and checks', () => {
  it('splits equations, assignments and lambdas at the top level only', () => {
    assert.deepEqual(splitEquation('(x^2+y^2)^2=32*(x^2-y^2)'), { lhs: '(x^2+y^2)^2', rhs: '32*(x^2-y^2)' });
    assert.equal(splitEquation('x->piecewise { x=4 ? 1, ? 0 }'), undefined);
    assert.equal(splitEquation('p := 3'), undefined);
    assert.equal(splitEquation('x<=3'), undefined);
    assert.deepEqual(splitAssignment('b := vector {root(3, 2), 2}'), { name: 'b', value: 'vector {root(3, 2), 2}' });
    assert.equal(splitAssignment('x=(y+2)*ln(y)'), undefined);
    assert.deepEqual(splitLambda('(x, y) -> sin(x^2)'), { params: ['x', 'y'], body: 'sin(x^2)' });
    assert.deepEqual(splitLambda('q->(r(2))(q)'), { params: ['q'], body: '(r(2))(q)' });
    assert.equal(splitLambda('x^2+y^2-z^2=1'), undefined);
    assert.deepEqual([...freeIdentifiers('x^2+y^2+z^2+2x*z=1')].sort(), ['x', 'y', 'z']);
    assert.deepEqual([...freeIdentifiers('diff(ln(x^2+1)+x^2-x:x)')], ['x']);
  });

  it('writes numbers the way Analitza reads them back exactly', async () => {
    assert.equal(analitzaNumber(1e21), '(1*10^(21))');
    assert.equal(analitzaNumber(-0.37), '(-0.37)');
    assert.equal(analitzaNumber(9.094947017729282e-13), '(9.094947017729282*10^(-13))');
    const printed = await run(['1e+21', analitzaNumber(1e21), analitzaNumber(9.094947017729282e-13)]);
    // Analitza reads "1e+21" as 1*e+21 (Euler's number): the reason for analitzaNumber.
    assert.deepEqual(printed, [
      { ok: true, value: '23.718281828' },
      { ok: true, value: '1e+21' },
      { ok: true, value: '9.09494701773e-13' },
    ]);
  });

  it('runs calgebra with one result per line, errors included, definitions visible to later lines', async () => {
    assert.deepEqual(await run(['r := a->q->a*q', '1/0', '(q->(r(2))(q))(3)', 'conjugate(1+i)']), [
      { ok: true, value: 'a->q->a*q' },
      { ok: false, error: 'Cannot divide by 0.' },
      { ok: true, value: '6' },
      { ok: true, value: '1+-i' },
    ]);
    assert.deepEqual(parseCalgebraOutput('Error:\n - a\n - b\n2\n\nExit.\n'), [{ ok: false, error: 'a; b' }, { ok: true, value: '2' }]);
  });

  it('decides on/off for curves, polar functions, implicit equations and surfaces with the real engine', async () => {
    assert.equal(await onPlot('x->x^2', [11.92, 142.0864], 2), true);
    assert.equal(await onPlot('x->x^2', [0.97, 4], 2), false);
    assert.equal(await onPlot('q->6*sin(3*q)', [1, 6 * Math.sin(3)], 2), true);
    assert.equal(await onPlot('diff((ln(x^2+1)+x^2)-x:x)', [-11, -23.18032786885246], 2), true);
    assert.equal(await onPlot('x=(y+2)*ln(y)', [20.79441541679836, 8], 2), true);
    assert.equal(await onPlot('x=(y+2)*ln(y)', [-9, -7.45], 2), false);
    assert.equal(await onPlot('x^2-ln(x)-1', [-8, 6.506363327070206], 2), false, 'ln of a negative number is nan, never on');
    assert.equal(await onPlot('(x, y)->sin(x^2)+sin(y^2)-e^(sin(x)+sin(y))', [-3.16, 8, -2.3513266831818216], 3), true);
    assert.equal(await onPlot('x^2+y^2+z^2+2x*z=1', [1.0, 0.9797958971132712, -1.2], 3), true);
    assert.equal(await onPlot('x^2+y^2+z^2+2x*z=1', [-1.69, -2.0006160742246046, 0.15], 3), false);
  });

  it('reads printed numbers, complex real parts and point keys', () => {
    assert.equal(printedNumber('-2.5e-7'), -2.5e-7);
    assert.equal(printedNumber('nan'), undefined);
    assert.equal(printedNumber('1+-i'), undefined);
    assert.equal(realPart('1+-i'), 1);
    assert.equal(realPart('3+-2*i'), 3);
    assert.equal(realPart('-2*i'), 0);
    assert.equal(realPart('true'), 1);
    assert.equal(realPart('vector { 1, 2 }'), undefined);
    assert.equal(sameValue('1+-i', '1'), true);
    assert.equal(sameValue('23.1406926205', '23.140692620502403'), true);
    assert.equal(sameValue('2+-i', '1'), false);
    assert.equal(sameValue('vector { -1, 1.44224957031 }', 'vector { -1, 1.44224957031 }'), true);
    assert.deepEqual(parsePointKey('(0, -0.0, 1)'), [0, -0, 1]);
    assert.deepEqual(parsePointKey('(11.92, 142.0864)'), [11.92, 142.0864]);
    assert.equal(parsePointKey('color'), undefined);
    assert.equal(agrees(16852337.69353376, 16852337.6935), true);
    assert.equal(agrees(1e-7, 2e-7), true);
    assert.equal(agrees(1, 1.01), false);
  });

  it('renders typed newlines as Enter and tabs as Tab between settle pauses (300 ms, then until the app is idle), and keeps typed text out of xdotool options', () => {
    assert.deepEqual(withKeysForControls([{ kind: 'type', text: 'a := 1\nb := 2' }, { kind: 'key', chord: 'Return' }]), [
      { kind: 'type', text: 'a := 1' },
      { kind: 'key', chord: 'Return' },
      { kind: 'type', text: 'b := 2' },
      { kind: 'key', chord: 'Return' },
    ]);
    assert.deepEqual(withKeysForControls([{ kind: 'type', text: '\\or\t\\vee' }]), [
      { kind: 'type', text: '\\or' },
      { kind: 'settle', ms: 300 },
      { kind: 'key', chord: 'Tab' },
      { kind: 'settle', ms: 300 },
      { kind: 'type', text: '\\vee' },
    ]);
    assert.deepEqual(xdotoolArgs({ kind: 'type', text: '--help' }, 12), ['type', '--delay', '12', '--', '--help']);
    assert.deepEqual(xdotoolArgs({ kind: 'key', chord: 'ctrl+l' }, 12), ['key', '--clearmodifiers', 'ctrl+l']);
    assert.deepEqual(xdotoolArgs({ kind: 'click', button: 1, count: 2 }, 12), ['click', '--repeat', '2', '--delay', '60', '1']);
  });

  it('chains a move and the click at its end into one xdotool call; every other event is a call or a pause of its own', () => {
    const calls = xdotoolCalls(
      [
        { kind: 'move', x: 10, y: 20 },
        { kind: 'click', button: 1, count: 2 },
        { kind: 'click', button: 3, count: 1 },
        { kind: 'move', x: 5, y: 6 },
        { kind: 'button_down', button: 1 },
        { kind: 'move', x: 7, y: 8 },
        { kind: 'sleep', ms: 150 },
        { kind: 'click', button: 1, count: 1 },
        { kind: 'settle', ms: 300 },
        { kind: 'type', text: 'ab' },
      ],
      12,
    );
    assert.deepEqual(calls, [
      { args: ['mousemove', '10', '20', 'click', '--repeat', '2', '--delay', '60', '1'], timeoutMs: 10_000 },
      { args: ['click', '--repeat', '1', '--delay', '60', '3'], timeoutMs: 10_000 },
      { args: ['mousemove', '5', '6'], timeoutMs: 10_000 },
      { args: ['mousedown', '1'], timeoutMs: 10_000 },
      { args: ['mousemove', '7', '8'], timeoutMs: 10_000 },
      { sleepMs: 150 },
      { args: ['click', '--repeat', '1', '--delay', '60', '1'], timeoutMs: 10_000 },
      { settleMs: 300 },
      { args: ['type', '--delay', '12', '--', 'ab'], timeoutMs: 10_034 },
    ]);
  });
});
