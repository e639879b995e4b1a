/**
 * Escaping for every page: text from outside (a server's model id, error text, a file path) shown
 * as written in Markdown (GitHub pages, PR comments, job summaries) and in HTML, never formatting
 * or injecting anything.
 */
import { maxOf } from '../extent.js';

/** One Markdown table row; `|` and line breaks inside cells are escaped. */
export function markdownRow(cells: readonly string[]): string {
  return `| ${cells.map(escapeCell).join(' | ')} |`;
}

/** A table cell's (or our own list item's) text: `|` escaped, line breaks as spaces. Text from outside goes through escapeText first. */
export function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/**
 * Text that came from outside (a server's model id, version, error text, a file path) for a
 * Markdown heading, list item or table cell: on one line, with HTML (`<`, `>`, `&`) and the
 * characters that format Markdown (`\ * ` [ ] | ~`, and `_` at a word's edge) escaped, so it shows as written and can
 * neither format nor inject anything where the page is rendered (GitHub pages, PR comments, job
 * summaries). Line breaks of any kind become spaces.
 */
export function escapeText(text: string): string {
  return markdownChars(oneLine(text))
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/**
 * One of our own lines that carries text from outside (a failure line: our words and numbers, a
 * server's error text) for a Markdown list item: escaped as escapeText does, except that `<`, `>`
 * and `&` stay as they are where they cannot start markup, so our `360 ms > 300 ms` reads the same
 * in the raw file: `<` becomes `&lt;` only before a letter, `/`, `!` or `?` (where a tag or an
 * autolink could start), `&` becomes `&amp;` only before a letter or `#` (an entity), and `>`
 * alone opens nothing inside a list item.
 */
export function escapeLine(text: string): string {
  return markdownChars(oneLine(text))
    .replace(/&(?=[A-Za-z#])/g, '&amp;')
    .replace(/<(?=[A-Za-z/!?])/g, '&lt;');
}

/** The characters that format Markdown escaped: `\ * ` [ ] | ~`, and `_` at a word's edge. */
function markdownChars(text: string): string {
  return (
    text
      .replace(/[\\`*[\]|~]/g, (c) => `\\${c}`)
      // an underscore formats only at a word's edge (`_b_`); inside a word (`owned_by`) it is left as it is
      .replace(/(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, '\\_')
  );
}

/** Text on one line: each line break of any kind (CRLF, CR, LF, U+2028, U+2029, U+0085) becomes a space. No escaping. */
export function oneLine(text: string): string {
  return text.replace(/\r\n|[\r\n\u2028\u2029\u0085]/g, ' ');
}

/** An inline code span for text from outside (a path): on one line, fenced by more backticks than it holds. */
export function codeSpan(text: string): string {
  const flat = oneLine(text);
  const longest = maxOf([0, ...(flat.match(/`+/g) ?? []).map((run) => run.length)]);
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** A fenced code block whose fence is longer than any backtick run in `text`, so the text cannot close it. */
export function codeBlock(text: string, lang = ''): string[] {
  const longest = maxOf([0, ...(text.match(/`+/g) ?? []).map((run) => run.length)]);
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}${lang}`, text, fence];
}

/** Text for HTML, in text and in attribute values (quotes escaped too). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
