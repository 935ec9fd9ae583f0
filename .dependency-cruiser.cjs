/**
 * The layering rules of docs/architecture.md ("Rules the checks enforce"), checked by
 * dependency-cruiser over src/ (`bun run check:deps`, run by .ci/run). Dependencies flow one way:
 *
 *   cli.ts → app.ts, services.ts, operations.ts → modules/<name> → jobs/, engines/, storage/, net/, db/, http/
 *
 * Each rule says why it exists; a violation names the file and the import.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'No import cycle of any length: every file can be understood from the files below it.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'shared-layers-below-modules',
      severity: 'error',
      comment: 'What every module shares (http, db, engines, storage, net, jobs, formats, local, transcript) and the command line\'s live client (live-client: it speaks to a server over the wire) never reach up into a module: they are handed what they need.',
      from: { path: '^src/(http|db|engines|storage|net|jobs|formats|local|live-client|crypto|transcript)/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'no-foreign-repo',
      severity: 'error',
      comment: "A module never reads another module's tables: it calls that module's service (its repo files are its own).",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/repo[.](sqlite[.]|postgres[.])?ts$', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'composition-root-on-top',
      severity: 'error',
      comment: 'The composition root (cli, app, services) and the operations registry stand above everything else; nothing below imports them (modules are handed the table).',
      from: { path: '^src/(modules|http|db|engines|storage|net|jobs|formats|local|live-client|crypto)/' },
      to: { path: '^src/(cli|app|services|operations)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'mcp-knows-no-operation',
      severity: 'error',
      comment: "MCP derives every tool from the operations' definitions it is handed (src/modules/mcp/tools.ts): it imports no other module and not the registry, so an operation is never wired there by hand.",
      from: { path: '^src/modules/mcp/' },
      to: { path: ['^src/modules/(?!mcp/)', '^src/operations\\.ts$'] },
    },
    {
      name: 'jobs-below-modules-and-http',
      severity: 'error',
      comment: 'The queue and the pipeline know nothing of HTTP: they are run by workers, not requests.',
      from: { path: '^src/(jobs|engines|storage|net|db)/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'jobs-know-no-work',
      severity: 'error',
      comment: 'jobs/ is the queue, the workers, the recurring schedules: what a job does is registered by the module that owns it (its kinds and stages), so jobs/ reaches no module, engine, storage or outbound network.',
      from: { path: '^src/jobs/' },
      to: { path: '^src/(modules|engines|storage|net|http|formats|local|backup)/' },
    },
    {
      name: 'job-runtime-from-the-root',
      severity: 'error',
      comment: 'One job runtime per process, built by the composition root: the modules are handed its registry (JobRegistry) and never start workers of their own.',
      from: { path: '^src/', pathNot: '^src/(services|jobs/.+)\\.ts$' },
      to: { path: '^src/jobs/(runtime|worker|wakeup)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'storage-adapters-inside-storage',
      severity: 'error',
      comment: 'A storage back end is reached through the MediaStorage interface (storage.ts) and the registry (index.ts), never by importing its adapter: what differs is a capability, not a kind.',
      from: { path: '^src/', pathNot: '^src/storage/' },
      to: { path: '^src/storage/', pathNot: '^src/storage/(index|storage|signed-url)\\.ts$' },
    },
    {
      name: 'transcript-is-a-value',
      severity: 'error',
      comment: 'The transcript (src/transcript/) is pure values and functions: it runs no I/O and imports nothing of src/ but types (the engines\' segment and word), so the notes repository, the formats, the pipeline and the edits all share it.',
      from: { path: '^src/transcript/' },
      to: { path: '^src/(?!transcript/)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'transcript-runs-no-io',
      severity: 'error',
      comment: 'No file system, network, process or database in the transcript value module.',
      from: { path: '^src/transcript/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'Every source file is used by something (a file nothing imports is dead code).',
      from: { orphan: true, path: '^src/', pathNot: ['\\.d\\.ts$', '^src/cli\\.ts$', '^src/testing/index\\.ts$'] },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '\\.(js|css)$'] },
    tsPreCompilationDeps: true,
    // parsed by swc: dependency-cruiser's TypeScript path needs typescript <7, and the project uses 7
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
}
