/**
 * The layer table of docs/architecture.md, written from .dependency-cruiser.cjs so the page and
 * the rules cannot drift apart (test/house/layers.test.ts compares them).
 *
 *   npx tsx scripts/house/layers-table.ts     prints the table
 */
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

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) console.log(layersTable());
