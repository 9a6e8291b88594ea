import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { compileErrors, describePredicate, evaluateChecks, MAX_CHECKS, type PredicateCheck } from '../../../io/predicates/sandbox';
import { parseTask, pythonSources, type Evaluator, type Task } from '../../../core/task';
import { APPS } from '../../../apps/index';
import { clearOfMidnight, pythonToday } from '../../support/day';

const ROOT = path.resolve(__dirname, '../../../../data/scienceboard');
const task = (software: string, id: string): Task => parseTask(APPS, JSON.parse(readFileSync(path.join(ROOT, software, `${id}.json`), 'utf8')), id);
const check = (t: Task, index: number): Evaluator => {
  const c = t.evaluate[index];
  assert.ok(c !== undefined);
  return c;
};
/** An info/db check of a real task as the sandbox takes it. */
const info = (t: Task, index: number, dump?: unknown): PredicateCheck => {
  const c = check(t, index) as Evaluator & { key: string; value: unknown; pred?: string };
  assert.ok(c.type === 'info' || c.type === 'db');
  return { key: c.key, value: c.value, ...(c.pred !== undefined ? { pred: c.pred } : {}), ...(dump !== undefined ? { dump } : {}) };
};
const states = (t: Task, index: number): PredicateCheck => {
  const c = check(t, index);
  assert.ok(c.type === 'states');
  return { kind: 'states', key: c.key, ...(c.find !== undefined ? { find: c.find } : {}), ...('value' in c ? { value: c.value } : {}), ...(c.pattern !== undefined ? { pattern: c.pattern } : {}) };
};

describe('Python predicate sandbox', function () {
  this.timeout(120_000);

  describe('the real tasks\' predicates, with Python\'s meaning', () => {
    it('Celestia: a tolerance pred, booleans, and B-12\'s walrus-and-math key', async () => {
      const b12 = task('Celestia', 'B-12');
      const dump = {
        entity: {
          Sol: { visible: false, position: [0, 0, 0] },
          Earth: { distance: 420000.5, visible: true, position: [1, 0, 0] },
          Moon: { visible: true, position: [0.5, 0.0001, 0] },
        },
      };
      const results = await evaluateChecks([0, 1, 2, 3].map((i) => info(b12, i)), dump);
      assert.deepEqual(results.map((r) => r.ok), [true, true, true, true], JSON.stringify(results));
      // One value off: the Moon no longer between Earth and Sun, Earth too far.
      const off = { entity: { ...dump.entity, Earth: { ...dump.entity.Earth, distance: 450001 }, Moon: { visible: true, position: [1.5, 0, 0] } } };
      assert.deepEqual((await evaluateChecks([0, 3].map((i) => info(b12, i)), off)).map((r) => r.ok), [false, false]);
      // Python's int/float meaning: 2400000 == 2400000.0 under A-01's pred and a key on a JSON number.
      const a01 = task('Celestia', 'A-01');
      assert.deepEqual((await evaluateChecks([info(a01, 0)], { time: { value: 2400000.05 } })).map((r) => r.ok), [true]);
    });

    it('GRASS GIS: info over the dump and a db check over its command\'s stdout', async () => {
      const a01 = task('GrassGIS', 'A-01');
      const d04 = task('GrassGIS', 'D-04');
      const stdout = 'cat|x|y|z\n257|-79.1050308691105|8.348947891274|0\n';
      const results = await evaluateChecks([info(a01, 0), info(d04, 0, stdout), info(d04, 0, stdout.replace('257', '258'))], { layers: [{ name: 'rivers@PERMANENT' }, { name: 'countries@PERMANENT' }] });
      assert.deepEqual(results.map((r) => r.ok), [true, true, false]);
      assert.equal((await evaluateChecks([info(a01, 0)], { layers: [{ name: 'rivers@PERMANENT' }] }))[0]?.ok, false);
    });

    it('ChimeraX: states with find, a lambda key with a null value, a pattern; a file value from a lambda', async () => {
      const b02 = task('ChimeraX', 'B-02');
      const a10 = task('ChimeraX', 'A-10');
      const d02 = task('ChimeraX', 'D-02');
      const dump = {
        '_state_containers.models._models.(1, 1)._name': 'hydrogen bonds',
        '_state_containers.models._models.(1, 1)._pbond_drawing.name': 'pbonds',
        '_state_containers.models._models.(1, 1)._pbond_drawing._opaque_color_count': 12,
        '_state_containers.models._models.(2,)._name': 'contacts',
        'tools.log.page_source': '<p>41 distances</p>',
      };
      const results = await evaluateChecks([states(b02, 0), states(b02, 1), states(a10, 0), states(d02, 0), states(d02, 1)], dump);
      assert.deepEqual(results.map((r) => r.ok), [true, true, true, true, true], JSON.stringify(results));
      const off = { ...dump, '_state_containers.models._models.(1, 1)._pbond_drawing._opaque_color_count': 11, '_state_containers.models._models.(1,)._nucleotide_info': 1, 'tools.log.page_source': '40 distances' };
      assert.deepEqual((await evaluateChecks([states(b02, 1), states(a10, 0), states(d02, 1)], off)).map((r) => r.ok), [false, false, false]);
      const d03 = task('ChimeraX', 'D-03');
      const dated = check(d03, 3);
      assert.ok(dated.type === 'file' && 'key' in dated);
      await clearOfMidnight(10_000);
      const stamp = pythonToday();
      const [withDate, without] = await evaluateChecks(
        [
          { kind: 'file', value: dated.value, content: `started ${stamp} 10:00` },
          { kind: 'file', value: dated.value, content: 'started 1999-01-01' },
        ],
        null,
      );
      assert.equal(withDate?.ok, true, JSON.stringify(withDate));
      assert.equal(without?.ok, false);
    });

    it('hands a dump\'s NaN and Infinity to the predicates as Python\'s json.loads gives them, not as null', async () => {
      const dump = { a: Number.NaN, b: Number.POSITIVE_INFINITY, c: Number.NEGATIVE_INFINITY, d: null };
      const results = await evaluateChecks(
        [
          { key: 'lambda d: (d["a"] != d["a"], d["b"] > 1e308, d["c"] < -1e308, d["d"] is None)', value: [true, true, true, true], pred: 'lambda l, r: list(l) == r' },
          { key: 'lambda d: d["a"]', value: Number.NaN, pred: 'lambda l, r: str(l) == "nan" and str(r) == "nan"' },
          { kind: 'states', key: 'b', value: Number.POSITIVE_INFINITY, dump: { b: Number.POSITIVE_INFINITY } },
          { kind: 'states', key: 'a', pattern: '^NaN$', dump: { a: Number.NaN } },
        ],
        dump,
      );
      assert.deepEqual(results.map((r) => [r.ok, r.error]), [[true, undefined], [true, undefined], [true, undefined], [true, undefined]]);
    });

    it('every Python source of every task file compiles under the sandbox\'s rules', () => {
      const sources: string[] = [];
      for (const software of ['Celestia', 'ChimeraX', 'GrassGIS']) {
        for (const file of require('node:fs').readdirSync(path.join(ROOT, software)) as string[]) {
          sources.push(...pythonSources(APPS, task(software, file.replace(/\.json$/, ''))).map((s) => s.source));
        }
      }
      assert.ok(sources.length > 100);
      assert.deepEqual([...compileErrors(sources)], []);
    });
  });

  describe('hostile predicates', () => {
    let dir: string;
    let marker: string;
    beforeEach(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'coda-sandbox-'));
      marker = path.join(dir, 'reached-the-host');
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('none reaches the host: imports, open, __subclasses__ walks, frames, builtins tricks', async () => {
      const hostile = [
        `lambda d: __import__('os').system('touch ${marker}')`,
        `lambda d: open('${marker}', 'w').write('x')`,
        "lambda d: open('/etc/passwd').read()",
        `lambda d: [c for c in ().__class__.__bases__[0].__subclasses__() if c.__name__ == 'Popen'][0](['touch', '${marker}'])`,
        "lambda d: [g for g in [(x for x in [1])]][0].gi_frame.f_back.f_globals",
        `lambda d: getattr(__import__('datetime'), 'sys').modules['os'].system('touch ${marker}')`,
        `lambda d: __import__('datetime').datetime.sys`,
        `lambda d: eval("__import__('os').system('touch ${marker}')")`,
        `lambda d: __builtins__['open']('${marker}', 'w')`,
      ];
      const results = await evaluateChecks(hostile.map((key) => ({ key, value: 0 })), {}, { timeoutMs: 5000 });
      assert.equal(existsSync(marker), false, 'a predicate reached the host');
      assert.deepEqual(results.map((r) => r.ok), hostile.map(() => false));
      for (const r of results) assert.ok(r.error !== undefined && r.field === 'key', JSON.stringify(r));
      assert.match(results[0]?.error ?? '', /ImportError: import of 'os' is not allowed/);
      assert.match(results[1]?.error ?? '', /NameError: name 'open' is not defined/);
      assert.match(results[3]?.error ?? '', /not allowed in a predicate/);
      assert.match(results[3]?.error ?? '', /__bases__/);
      assert.match(results[4]?.error ?? '', /f_back.*gi_frame|gi_frame/);
      assert.match(results[5]?.error ?? '', /NameError: name 'getattr' is not defined/);
      assert.match(results[6]?.error ?? '', /AttributeError/);
      assert.match(results[7]?.error ?? '', /NameError: name 'eval' is not defined/);
      assert.match(results[8]?.error ?? '', /__builtins__/);
      assert.equal(describePredicate('X-01', 1, results[1]!), "task X-01 evaluate[1].key: NameError: name 'open' is not defined");
    });

    it('reads no attribute through a format string: format and format_map on a literal have their fields checked, every other use is refused', async () => {
      // Issue 44 item 4: str.format reads the attributes its text names, which the compiled code's names never hold.
      const walks = ["lambda d: '{0.__globals__[os].environ}'.format(__import__)", "lambda d: '{0.__globals__[builtins].exec}'.format(__import__)"];
      const results = await evaluateChecks(walks.map((key) => ({ key, value: 0 })), {});
      for (const r of results) assert.deepEqual([r.ok, r.field, r.error], [false, 'key', 'ValueError: names __globals__ are not allowed in a predicate'], JSON.stringify(r));
      const literalOnly = 'format is allowed in a predicate only on a string literal (its fields are checked before it runs)';
      const refused: Record<string, RegExp | string> = {
        "lambda d: '{x.__globals__}'.format_map({'x': __import__})": /names __globals__ are not allowed/,
        "lambda d: '{0:{1.__globals__}}'.format(1, __import__)": /names __globals__ are not allowed/,
        "lambda d: '{0.gi_frame}'.format(d)": /names gi_frame are not allowed/,
        "lambda d: list(map('{0.__globals__}'.format, [__import__]))": /names __globals__ are not allowed/,
        "lambda d: str.format('{0.__globals__}', __import__)": literalOnly,
        "lambda d: ('{0.' + '__glo' + 'bals__}').format(__import__)": literalOnly,
        "lambda d, n='__globals__': ('{0.%s}' % n).format(__import__)": literalOnly,
        "lambda d: [s.format for s in ['{0.__globals__}']][0](__import__)": literalOnly,
        "lambda d: max(['{0.__globals__}'], key=len).format_map({'0': __import__})": literalOnly.replace('format', 'format_map'),
        "lambda d: __import__('string').Formatter().format('{0.__globals__}', __import__)": literalOnly,
        "lambda d: '{0.}'.format(d)": /the format string '\{0\.\}' cannot be read: Empty attribute/,
      };
      const errors = compileErrors(Object.keys(refused));
      for (const [source, why] of Object.entries(refused)) {
        const error = errors.get(source) ?? '';
        if (typeof why === 'string') assert.equal(error, `ValueError: ${why}`, source);
        else assert.match(error, why, source);
      }
      // string.Formatter's other entry points are not refused by name: the module itself cannot be imported.
      const [formatter] = await evaluateChecks([{ key: "lambda d: __import__('string').Formatter().vformat('{0.__globals__}', [__import__], {})", value: 0 }], {});
      assert.match(formatter?.error ?? '', /ImportError: import of 'string' is not allowed/);
      // What a predicate may format still works: public attributes, items, nested specs, f-strings.
      const allowed = ["lambda d: '{0.year}-{1[a]:>{2}}'.format(__import__('datetime').date(2020, 1, 2), d, 3)", "lambda d: '{a}!'.format_map(d)", "lambda d: f'{d[\"a\"]!r:>{3}}'"];
      assert.deepEqual([...compileErrors(allowed).keys()], []);
      const formatted = await evaluateChecks([{ key: allowed[0]!, value: '2020-  1' }, { key: allowed[1]!, value: '1!' }, { key: allowed[2]!, value: '  1' }], { a: 1 });
      assert.deepEqual(formatted.map((r) => [r.ok, r.error]), [[true, undefined], [true, undefined], [true, undefined]], JSON.stringify(formatted));
    });

    it('offers time\'s clock readers only: nothing that sets the host\'s clock, sleeps or changes the process (named, never called)', async () => {
      const taken = ['clock_settime', 'clock_settime_ns', 'sleep', 'tzset', 'pthread_getcpuclockid', 'CLOCK_REALTIME'];
      const results = await evaluateChecks(
        [
          ...taken.map((name) => ({ key: `lambda d: __import__('time').${name}`, value: 0 })),
          { key: "lambda d: __import__('time').time() > 0 and len(__import__('time').strftime('%Y')) == 4", value: true },
        ],
        {},
      );
      taken.forEach((name, i) => assert.match(results[i]?.error ?? '', new RegExp(`AttributeError: .*'${name}'`), `${name}: ${JSON.stringify(results[i])}`));
      assert.deepEqual(results.at(-1), { ok: true, detail: 'found True, expected True' });
    });

    it('an endless loop, a huge output and a pred that raises each fail their own check, the others still run', async () => {
      const checks: PredicateCheck[] = [
        { key: 'lambda d: [x for x in iter(int, 1)]', value: 0 },
        { key: "lambda d: 'x' * 10**9", value: 0 },
        { key: 'lambda d: d', value: 0, pred: 'lambda key, value: key / value' },
        { key: "lambda d: d['a']", value: 1 },
      ];
      const results = await evaluateChecks(checks, { a: 1 }, { timeoutMs: 1000, memoryBytes: 256 * 1024 * 1024 });
      assert.deepEqual(results.map((r) => r.ok), [false, false, false, true], JSON.stringify(results));
      assert.match(results[0]?.error ?? '', /MemoryError|timed out/);
      assert.match(results[1]?.error ?? '', /MemoryError/);
      assert.equal(results[2]?.field, 'pred');
      assert.match(results[2]?.error ?? '', /TypeError: unsupported operand/);
    });

    it('a loop the timer cannot stop (one long C call) is killed and reported as timed out, naming its field; the next check is still evaluated', async () => {
      const results = await evaluateChecks(
        [
          { key: "lambda d: d['a']", value: 1 },
          { key: 'lambda d: sum(range(10 ** 13))', value: 0 },
          { key: "lambda d: d['a']", value: 1 },
        ],
        { a: 1 },
        { timeoutMs: 500 },
      );
      assert.deepEqual(results.map((r) => r.ok), [true, false, true], JSON.stringify(results));
      assert.equal(results[1]?.field, 'key');
      assert.match(results[1]?.error ?? '', /^timed out after 0\.5 s \(in a call its timer cannot interrupt: its process was killed\)$/);
    });

    it('an error whose message cannot be formatted fails its own check; the next check is still evaluated', async () => {
      const results = await evaluateChecks(
        [
          { key: 'lambda d: {}[10 ** 5000]', value: 0 },
          { key: 'lambda d: d', value: 0, pred: 'lambda key, value: {value: key}[10 ** 5000]' },
          { key: "lambda d: d['a']", value: 1 },
        ],
        { a: 1 },
      );
      assert.deepEqual(results.map((r) => r.ok), [false, false, true], JSON.stringify(results));
      assert.deepEqual(results.slice(0, 2).map((r) => [r.field, r.error]), [
        ['key', 'KeyError (its message could not be shown: ValueError)'],
        ['pred', 'KeyError (its message could not be shown: ValueError)'],
      ]);
    });

    it(`evaluates at most ${MAX_CHECKS} checks of a task, so one evaluation's time stays bounded`, async () => {
      const checks = Array.from({ length: MAX_CHECKS + 2 }, () => ({ key: "lambda d: d['a']", value: 1 }));
      const results = await evaluateChecks(checks, { a: 1 });
      assert.deepEqual(results.map((r) => r.ok), checks.map((_, i) => i < MAX_CHECKS));
      assert.equal(results.at(-1)?.error, `not evaluated: at most ${MAX_CHECKS} checks of a task are evaluated`);
    });

    it('caps what the child may write', async () => {
      const results = await evaluateChecks([{ key: "lambda d: 'y' * 250", value: 0 }], {}, { maxOutputBytes: 100 });
      assert.equal(results[0]?.ok, false);
      assert.match(results[0]?.error ?? '', /wrote more than 100 bytes/);
    });

    it('finds, at load, sources that do not compile or name what predicates may not', () => {
      const errors = compileErrors(['lambda d: d[', 'lambda d: d.__class__', 'lambda d: d["ok"]', "lambda: __import__('datetime').datetime.today()"]);
      assert.deepEqual([...errors.keys()], ['lambda d: d[', 'lambda d: d.__class__']);
      assert.match(errors.get('lambda d: d[') ?? '', /SyntaxError/);
      assert.match(errors.get('lambda d: d.__class__') ?? '', /names __class__ are not allowed/);
    });
  });
});
