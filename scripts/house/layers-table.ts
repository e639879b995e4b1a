/**
 * The layer table of docs/architecture.md, written from .dependency-cruiser.cjs so the page and
 * the rules cannot drift apart (test/house/layers.test.ts compares them).
 *
 *   npx tsx scripts/house/layers-table.ts           prints the table
 *   npx tsx scripts/house/layers-table.ts --write   writes it into docs/architecture.md
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

interface Layer {
  path: string;
  may: string[];
  doc: string;
}

const require = createRequire(import.meta.url);

/** The layers, lowest first, as the rules name them. */
export function layers(): Array<[string, Layer]> {
  const config = require('../../.dependency-cruiser.cjs') as { LAYERS: Record<string, Layer> };
  return Object.entries(config.LAYERS);
}

/** Where a layer's files are, from its path rule: `^src/metrics/` → `src/metrics/`. */
function where(path: string): string {
  return path
    .replace(/^\^/, '')
    .replace(/\\\\?\.ts\$$/, '.ts')
    .replace(/\\\./g, '.')
    .replace(/\(([^)]*)\)/g, (_, alts: string) => `{${alts.split('|').join(',')}}`)
    .replace(/\$$/, '');
}

export function layersTable(): string {
  const rows = layers().map(([name, l]) => `| ${name} | \`${where(l.path)}\` | ${l.may.length === 0 ? 'nothing' : l.may.includes('*') ? 'everything' : l.may.join(', ')} | ${l.doc.replace(/\|/g, '\\|')} |`);
  return ['| layer | files | may import | what it holds |', '|---|---|---|---|', ...rows].join('\n');
}

const START = '<!-- layers-table:start -->';
const END = '<!-- layers-table:end -->';

/** The page with the table between its markers replaced by the current one. */
export function withLayersTable(page: string): string {
  const a = page.indexOf(START);
  const b = page.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/architecture.md has no ${START} … ${END} markers`);
  return `${page.slice(0, a + START.length)}\n${layersTable()}\n${page.slice(b)}`;
}

export const ARCHITECTURE_PAGE = fileURLToPath(new URL('../../docs/architecture.md', import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--write')) {
    writeFileSync(ARCHITECTURE_PAGE, withLayersTable(readFileSync(ARCHITECTURE_PAGE, 'utf8')));
    console.log(`wrote the layer table into ${ARCHITECTURE_PAGE}`);
  } else {
    console.log(layersTable());
  }
}
