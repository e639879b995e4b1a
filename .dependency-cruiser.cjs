/**
 * The layers of llm-speed-matrix, checked by dependency-cruiser (`npm run check:layers`; CI and the
 * unit test test/house/layers.test.ts run it). docs/architecture.md draws the same table.
 *
 * Each layer names the layers it may import; an import of anything else inside the repository is
 * an error, type-only imports included (a type is a dependency too). A layer may always import its
 * own files. Packages and Node built-ins are checked by the named rules below (shapes import
 * nothing; metrics are pure; only the client and the engines speak HTTP).
 */

/** @type {Record<string, { path: string; may: string[]; doc: string }>} */
const LAYERS = {
  shapes: { path: '^src/shapes/', may: [], doc: 'the shapes every layer shares: timelines, chunks, metric samples, result types, cell keys' },
  base: { path: '^src/(errors|clock|random|redact|spelling|extent)\\.ts$', may: ['shapes'], doc: 'error classes, the monotonic clock, seeded randomness, secret redaction, spelling hints, extremes and appends of any size' },
  text: { path: '^src/text/', may: ['shapes', 'base'], doc: 'words for people: Markdown and HTML escaping, number formats, a capacity row in one line' },
  meta: { path: '^src/meta/', may: ['shapes', 'base'], doc: 'facts about this machine, this package and its peers; CLI argument conventions' },
  slo: { path: '^src/slo/', may: ['shapes', 'base'], doc: 'the SLO (parse, text) and the capacity search (bracket, bisection)' },
  config: { path: '^src/config/', may: ['shapes', 'base', 'meta', 'slo'], doc: 'the one reader of the environment; the suite input, defaults, the resolved configuration' },
  metrics: { path: '^src/metrics/', may: ['shapes', 'base', 'config-defaults'], doc: 'pure: figure definitions and statistics' },
  tokenizer: { path: '^src/tokenizer/', may: ['shapes', 'base'], doc: 'a local tokenizer.json and the recount of streamed text' },
  client: { path: '^src/client/', may: ['shapes', 'base', 'config-defaults'], doc: 'bytes → SSE events → timelines; knows no engine' },
  engines: { path: '^src/engines/', may: ['shapes', 'base', 'client', 'config-defaults'], doc: 'one adapter per server kind' },
  prompts: { path: '^src/prompts/', may: ['shapes', 'base', 'config', 'engines'], doc: 'exact-length prompts and their calibration' },
  thresholds: { path: '^src/thresholds/(schema|load|gen-schema|tolerances)\\.ts$', may: ['shapes', 'base', 'config'], doc: 'threshold files: schema, loading, regression tolerances' },
  results: { path: '^src/results/', may: ['shapes', 'base', 'meta', 'config'], doc: 'the schema, collect, validate, write, lock' },
  judge: { path: '^src/judge/', may: ['shapes', 'base', 'text', 'metrics', 'slo', 'thresholds', 'config'], doc: 'every decision about a cell or a row' },
  workload: { path: '^src/workload/', may: ['shapes', 'base', 'config', 'metrics', 'tokenizer', 'engines', 'prompts'], doc: 'a run\'s workload: length draws, JSONL prompt files, the requests of a cell' },
  load: { path: '^src/load/', may: ['shapes', 'base', 'config', 'metrics', 'tokenizer', 'client', 'engines', 'prompts', 'workload'], doc: 'prefill and sustained-decode runners' },
  pages: { path: '^src/pages/', may: ['shapes', 'base', 'text', 'meta', 'slo', 'config', 'metrics', 'judge', 'results'], doc: 'every page over one view model' },
  compare: { path: '^src/compare/', may: ['shapes', 'base', 'text', 'meta', 'config', 'slo', 'thresholds', 'judge', 'results', 'pages'], doc: 'reading results to compare; the compare command' },
  update: { path: '^src/thresholds/update\\.ts$', may: ['shapes', 'base', 'text', 'meta', 'config', 'thresholds', 'judge', 'results', 'pages', 'compare'], doc: '`-u`: threshold files rewritten from a run' },
  sim: { path: '^src/sim/', may: ['shapes', 'base', 'meta', 'config'], doc: 'the embedded simulated server; never the measuring side' },
  init: { path: '^src/init/', may: ['shapes', 'base', 'text', 'meta', 'config', 'results'], doc: '`init`: the files written into a user\'s repository' },
  report: { path: '^src/report/', may: ['shapes', 'base', 'text', 'meta', 'config', 'results', 'pages', 'compare'], doc: 'the `report` command' },
  matrix: { path: '^src/matrix/', may: ['shapes', 'base', 'text', 'meta', 'slo', 'config', 'metrics', 'tokenizer', 'client', 'engines', 'prompts', 'workload', 'thresholds', 'judge', 'load', 'pages', 'results', 'compare', 'sim'], doc: 'Vitest test generation: measure → figures → judge → publish' },
  reporters: { path: '^reporters/', may: ['shapes', 'base', 'text', 'meta', 'slo', 'config', 'thresholds', 'judge', 'pages', 'results', 'compare', 'update', 'task-meta'], doc: 'the speed-matrix reporter: collect, render, write, -u' },
  entries: { path: '^src/(index|vitest|cli|wrong-entry)\\.ts$', may: ['*'], doc: 'the package\'s entry points and the command' },
};

/** Parts of a layer another layer may import without the rest of it. */
const PARTS = {
  'config-defaults': '^src/config/defaults\\.ts$',
  'task-meta': '^src/matrix/task-meta\\.ts$',
};

const pathOf = (name) => PARTS[name] ?? LAYERS[name].path;
const layerRules = Object.entries(LAYERS)
  .filter(([, layer]) => !layer.may.includes('*'))
  .map(([name, layer]) => ({
    name: `layer-${name}`,
    comment: `${name} (${layer.doc}) may import only: ${layer.may.length > 0 ? layer.may.join(', ') : 'nothing of the repository'}`,
    severity: 'error',
    from: { path: layer.path },
    to: {
      path: '^(src|reporters)/',
      pathNot: [layer.path, ...layer.may.map(pathOf)],
    },
  }));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'shapes-import-nothing',
      comment: 'src/shapes holds plain shapes: no package, no Node built-in',
      severity: 'error',
      from: { path: '^src/shapes/' },
      to: { pathNot: '^src/shapes/' },
    },
    {
      name: 'metrics-are-pure',
      comment: 'src/metrics computes figures from data: no package, no Node built-in (no clock, no I/O)',
      severity: 'error',
      from: { path: '^src/metrics/' },
      to: { dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-peer', 'npm-optional'] },
    },
    {
      name: 'only-client-and-engines-speak-http',
      comment: 'undici is the transport of the client (and of the engines\' calls through it)',
      severity: 'error',
      from: { path: '^(src|reporters)/', pathNot: '^src/(client|engines)/' },
      to: { path: 'node_modules/undici/' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycle between files',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'every import resolves',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};

/** the table itself, for docs and tests (dependency-cruiser reads only the keys above) */
Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS, enumerable: false });
