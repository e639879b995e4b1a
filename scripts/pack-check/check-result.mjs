// A finished run in a user's project: the page and the JSON exist, the JSON is a complete result
// with the expected number of cells, and the page shows every cell.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, cellCount] = process.argv.slice(2);
const md = join(dir, 'speed-matrix.md');
const json = join(dir, 'speed-matrix.json');
for (const f of [md, json]) if (!existsSync(f)) throw new Error(`${f} was not written`);
const result = JSON.parse(readFileSync(json, 'utf8'));
const page = readFileSync(md, 'utf8');
const problems = [];
if (result.partial) problems.push('the result is still partial');
if (result.cells.length !== Number(cellCount)) problems.push(`${result.cells.length} cells, expected ${cellCount}`);
for (const c of result.cells) {
  if (!c.status) problems.push(`cell ${c.contextLabel}/${c.concurrency} has no status`);
  if (!page.includes(`| ${c.contextLabel} | ${c.concurrency} | `)) problems.push(`the page has no row for ${c.contextLabel}/${c.concurrency}`);
}
if (!page.includes('Sustained decode')) problems.push('the page has no Sustained decode section');
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
const statuses = [...new Set(result.cells.map((c) => c.status))].join(', ');
console.log(`page + JSON: ${result.cells.length} cells (${statuses}), ${result.prefill.length} prefill rows, tool ${result.info.run.tool.name} ${result.info.run.tool.version}`);
