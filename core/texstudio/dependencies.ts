/**
 * What a LaTeX document needs from the TeX installation and from the files around it, read from
 * its source as pdflatex would look for them: `\documentclass{x}` → x.cls, `\usepackage{a,b}` and
 * `\RequirePackage` → a.sty, b.sty (babel's languages → <language>.ldf, fontenc's encodings →
 * <enc>enc.def), `\bibliographystyle{s}` → s.bst; and the document's own files: `\input` and
 * `\include` (.tex), `\includegraphics` (any of pdflatex's graphics extensions), `\bibliography`
 * (.bib). Comments are dropped first. Pure: the caller asks kpsewhich whether the TeX files exist.
 */

export interface TexDependencies {
  /** File names kpsewhich looks up (footmisc.sty, article.cls, plain.bst, english.ldf). */
  readonly texFiles: readonly string[];
  /** Files beside the document, relative to its folder: each entry lists the names that would do (figs/lat → figs/lat.pdf, figs/lat.png, ...). */
  readonly localFiles: ReadonlyArray<{ readonly command: string; readonly candidates: readonly string[] }>;
}

/** pdflatex's graphics extensions (graphicx with the pdftex driver), in its order. */
const GRAPHICS_EXTENSIONS = ['.pdf', '.png', '.jpg', '.jpeg', '.eps'];

/** `\name[options]{argument}` with optional `*` and whitespace; options and argument without nested braces. */
const COMMAND = /\\(documentclass|usepackage|RequirePackage|bibliographystyle|bibliography|addbibresource|input|include|includegraphics)\*?\s*(?:\[([^\]]*)\])?\s*\{([^}]*)\}/g;

/** The source without comments: from an unescaped % to the end of its line. */
const withoutComments = (source: string): string => source.replace(/(^|[^\\])%.*$/gm, '$1');

const list = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

const hasExtension = (name: string): boolean => /\.[A-Za-z0-9]+$/.test(name.split('/').at(-1) ?? '');

export function texDependencies(source: string): TexDependencies {
  const texFiles = new Set<string>();
  const localFiles: Array<{ command: string; candidates: string[] }> = [];
  for (const match of withoutComments(source).matchAll(COMMAND)) {
    const [, name = '', options = '', argument = ''] = match;
    switch (name) {
      case 'documentclass':
        for (const cls of list(argument)) texFiles.add(`${cls}.cls`);
        break;
      case 'usepackage':
      case 'RequirePackage':
        for (const pkg of list(argument)) {
          texFiles.add(`${pkg}.sty`);
          // The options of these two name files of their own (babel: languages; fontenc: encodings).
          if (pkg === 'babel') for (const language of list(options).filter((o) => !o.includes('='))) texFiles.add(`${language}.ldf`);
          if (pkg === 'fontenc') for (const encoding of list(options)) texFiles.add(`${encoding.toLowerCase()}enc.def`);
        }
        break;
      case 'bibliographystyle':
        texFiles.add(`${argument.trim()}.bst`);
        break;
      case 'bibliography':
        for (const bib of list(argument)) localFiles.push({ command: `\\bibliography{${bib}}`, candidates: [hasExtension(bib) ? bib : `${bib}.bib`] });
        break;
      case 'addbibresource':
        localFiles.push({ command: `\\addbibresource{${argument.trim()}}`, candidates: [argument.trim()] });
        break;
      case 'input':
      case 'include': {
        const file = argument.trim();
        localFiles.push({ command: `\\${name}{${file}}`, candidates: hasExtension(file) ? [file] : [`${file}.tex`, file] });
        break;
      }
      case 'includegraphics': {
        const file = argument.trim();
        localFiles.push({ command: `\\includegraphics{${file}}`, candidates: hasExtension(file) ? [file] : GRAPHICS_EXTENSIONS.map((ext) => `${file}${ext}`) });
        break;
      }
    }
  }
  return { texFiles: [...texFiles], localFiles };
}
