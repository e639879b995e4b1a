// The packed tarball holds only what users need: dist/ (JavaScript, .d.ts, schemas), the bin,
// README, LICENSE, CHANGELOG and package.json; no test, perf, CI or TypeScript source file.
import { readFileSync } from 'node:fs';

const [pack] = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const paths = pack.files.map((f) => f.path);
const allowed = (p) =>
  ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'bin/llm-speed-matrix.mjs'].includes(p) ||
  (p.startsWith('dist/') && /\.(js|mjs|d\.ts|json)$/.test(p) && !/(^|\/)(test|perf|\.ci|scripts)\//.test(p)) ||
  p === 'dist/bench/workloads/sample.jsonl';
const stray = paths.filter((p) => !allowed(p));
const required = ['LICENSE', 'CHANGELOG.md', 'README.md', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/vitest.js', 'dist/reporters/speed-matrix.js',
  'dist/src/sim/index.js', 'dist/src/sim/worker.mjs', 'dist/bench/workloads/sample.jsonl', 'dist/schemas/speed-matrix.schema.json', 'dist/schemas/thresholds.schema.json', 'dist/src/cli.js'];
const missing = required.filter((p) => !paths.includes(p));
if (stray.length || missing.length) {
  if (stray.length) console.error(`the tarball holds files users do not need: ${stray.slice(0, 20).join(', ')}`);
  if (missing.length) console.error(`the tarball lacks: ${missing.join(', ')}`);
  process.exit(1);
}
const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`${pack.filename}: ${pack.entryCount} files, packed ${kb(pack.size)}, unpacked ${kb(pack.unpackedSize)}; no test, perf or CI file`);
