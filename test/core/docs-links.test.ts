import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The README is a short guide whose details live in docs/: every relative link in README.md and
 * docs/*.md (a page, a source file, an image, a heading anchor) must lead somewhere, so moving a
 * section cannot leave a reader at a dead end. Nor may a page, a comment or a script cite notes
 * that live outside the repository: what the code relies on is written in docs/ (formats.md, method.md).
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** What a Markdown reader of the repository can open: files, and the heading anchors of a page. */
export interface Tree {
  exists(file: string): boolean;
  read(file: string): string;
}

/** The text without fenced code blocks and inline code spans, where brackets are not links. */
const prose = (markdown: string): string => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
export const headingAnchor = (heading: string): string =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

/** The anchors of a page's headings. */
const anchorsOf = (markdown: string): Set<string> =>
  new Set([...prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)].map((m) => headingAnchor(m[1] as string)));

/** Every link and image target in the prose of a page, as written. */
export function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
}

/**
 * The relative links of `file` (a path from the root) that lead nowhere: a missing file, or an
 * anchor no heading of the Markdown page it names has. Links with a scheme (https:, mailto:) are
 * not the repository's to check.
 */
export function brokenLinks(file: string, tree: Tree): Array<{ file: string; target: string; why: string }> {
  const text = tree.read(file);
  return linkTargets(text).flatMap((target) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return [];
    const [pathPart = '', anchor] = target.split('#', 2);
    const linked = pathPart === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(pathPart)));
    if (linked.startsWith('../') || !tree.exists(linked)) return [{ file, target, why: `no file ${linked}` }];
    if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(tree.read(linked)).has(anchor.toLowerCase())) {
      return [{ file, target, why: `no heading #${anchor} in ${linked}` }];
    }
    return [];
  });
}

const repository: Tree = {
  exists: (file) => existsSync(path.join(ROOT, file)),
  read: (file) => readFileSync(path.join(ROOT, file), 'utf8'),
};

/** What is built, installed or generated, never written by hand. */
const GENERATED = new Set(['.git', 'node_modules', 'build', 'coverage', '.tools', '.data', '.nyc_output', 'test-artifacts', '__pycache__']);
/** Text a reader of the repository reads: sources, scripts, configuration, pages, and files without an extension (.ci/run, Dockerfile). */
const TEXT = /\.(ts|js|py|sh|md|ya?ml|css)$|^[^.]+$/;

/** Every hand-written text file, as a path from the root. Symbolic links (a worktree's node_modules) are not followed. */
function textFiles(dir = ''): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return GENERATED.has(entry.name) ? [] : textFiles(file);
    return entry.isFile() && TEXT.test(entry.name) ? [file] : [];
  });
}

/** The team's reference notes and shared folder, which a clone of the repository does not have. */
const OUTSIDE_NOTES = /REFERENCE\.md|\.\.\/shared\//;

const pages = (): string[] => [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md') && statSync(path.join(ROOT, 'docs', name)).isFile())
    .map((name) => `docs/${name}`),
];

describe('the links of the README and docs/', () => {
  const fixture: Record<string, string> = {
    'README.md': [
      '# Guide',
      'See [setup](docs/setup.md), [its cluster part](docs/setup.md#a-labs-cluster), [the code](core/task.ts) and ![a picture](docs/a.png).',
      'Broken: [gone](docs/gone.md), [no heading](docs/setup.md#nowhere), [above the root](../x.md), [here](#no-such).',
      'Not links: `[x](nothing.md)`, [web](https://example.org/x.md), and',
      '```',
      '[in a fence](fenced.md)',
      '```',
    ].join('\n'),
    'docs/setup.md': "# Set-up\n\n## A lab's cluster\n\nBack to the [README](../README.md#guide).\n",
    'docs/a.png': '',
    'core/task.ts': '',
  };
  const fake: Tree = { exists: (file) => file in fixture, read: (file) => fixture[file] ?? '' };

  it('finds a missing file, a missing anchor and a path above the root, and skips code and URLs', () => {
    assert.deepEqual(linkTargets(fixture['README.md'] ?? ''), [
      'docs/setup.md', 'docs/setup.md#a-labs-cluster', 'core/task.ts', 'docs/a.png',
      'docs/gone.md', 'docs/setup.md#nowhere', '../x.md', '#no-such', 'https://example.org/x.md',
    ]);
    assert.deepEqual(brokenLinks('README.md', fake).map((b) => `${b.target}: ${b.why}`), [
      'docs/gone.md: no file docs/gone.md',
      'docs/setup.md#nowhere: no heading #nowhere in docs/setup.md',
      '../x.md: no file ../x.md',
      '#no-such: no heading #no-such in README.md',
    ]);
    assert.deepEqual(brokenLinks('docs/setup.md', fake), []);
  });

  it('gives headings the anchors GitHub gives them', () => {
    assert.equal(headingAnchor('GPU side: reward service, GPU worker, trainer doubles'), 'gpu-side-reward-service-gpu-worker-trainer-doubles');
    assert.equal(headingAnchor("The tests' other doubles"), 'the-tests-other-doubles');
    assert.equal(headingAnchor('Using an existing Temporal cluster, S3 and vLLM'), 'using-an-existing-temporal-cluster-s3-and-vllm');
  });

  it('every relative link in README.md and docs/*.md leads to a file (and heading) of the repository', () => {
    const files = pages();
    assert.ok(files.length > 10, `README.md and the docs pages: ${files.join(', ')}`);
    const checked = files.flatMap((file) => linkTargets(repository.read(file)).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t)));
    assert.ok(checked.length > 30, `${checked.length} relative links`);
    assert.deepEqual(files.flatMap((file) => brokenLinks(file, repository)), []);
  });

  it('no page, source or script cites notes outside the repository', () => {
    const files = textFiles();
    assert.ok(files.some((f) => f === 'core/reward.ts') && files.some((f) => f === 'temporal.yaml') && files.some((f) => f === '.ci/run'), 'sources, configuration and scripts are read');
    const citing = files.flatMap((file) =>
      repository
        .read(file)
        .split('\n')
        .flatMap((line, i) => (OUTSIDE_NOTES.test(line) ? [`${file}:${i + 1}`] : [])),
    );
    assert.deepEqual(citing, []);
  });

  it('the README links every docs page', () => {
    const linked = new Set(linkTargets(repository.read('README.md')).map((t) => t.split('#')[0]));
    assert.deepEqual(pages().filter((page) => page.startsWith('docs/') && !linked.has(page)), []);
  });
});
