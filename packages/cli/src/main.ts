import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import type { Issue } from '@app-serving/core';
import { EXIT, UsageError } from './errors.ts';
import { createOutput, redactCredentials, type Output } from './output.ts';
import { foldRepeated, groupDigits, repeatedSuffix, type IssueLine } from './repeated.ts';

export { exitQuietlyOnClosedPipe } from './output.ts';

/** Options shared by every command. */
export interface GlobalOptions {
  readonly json?: boolean;
  readonly debug?: boolean;
  readonly color?: boolean;
}

/** A command body: returns the exit code. Loaded on demand so that `--help` loads nothing else. */
type Action = (args: { options: Record<string, unknown>; operands: string[]; output: Output }) => Promise<number>;

/** Command bodies, loaded on demand (each its own chunk in the bundle). */
const COMMANDS: Record<string, () => Promise<unknown>> = {
  validate: () => import('./commands/validate.ts'),
  plan: () => import('./commands/plan.ts'),
  render: () => import('./commands/render.ts'),
  diff: () => import('./commands/diff.ts'),
  images: () => import('./commands/images.ts'),
  'new-model': () => import('./commands/new-model.ts'),
  migrate: () => import('./commands/migrate.ts'),
  verify: () => import('./commands/verify.ts'),
  preflight: () => import('./commands/preflight.ts'),
};

const VERSION = packageVersion();
const REPORT_URL = 'https://github.com/app-serving/app-serving/issues';

/** The version of @app-serving/cli: its package.json above this file (src/, dist/ or the bundle in dist/cli/). */
function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); dir.pathname !== '/'; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@app-serving/cli' && pkg.version) return pkg.version;
    } catch {
      // not here: look one folder up
    }
  }
  return 'unknown';
}

/** Runs the CLI with `argv` (as `process.argv`) and returns the exit code. */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let output = createOutput({ env });
  let exitCode: number = EXIT.ok;
  const program = buildProgram(async (name, operands, commandOptions) => {
    const options = { ...program.opts(), ...commandOptions } as Record<string, unknown> & GlobalOptions;
    output = createOutput({ env, color: options.color !== false });
    try {
      workingDirectory();
      const module = (await COMMANDS[name]!()) as { default: Action };
      exitCode = await module.default({ options, operands, output });
    } catch (error) {
      exitCode = report(error, output, options);
    }
  });
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return report(error, output, {});
  }
  return exitCode;
}

/** The working directory, checked: a folder deleted under the shell is the user's to fix (exit 2), not a bug. */
function workingDirectory(): string {
  try {
    return process.cwd();
  } catch (error) {
    throw new UsageError(`the working directory no longer exists (${(error as NodeJS.ErrnoException).code ?? 'error'}): cd to an existing folder and run the command again`);
  }
}

/** Turns an error into its exit code and message: expected failures, usage errors, bugs. */
function report(error: unknown, output: Output, options: GlobalOptions): number {
  const { color } = output;
  if (isStackError(error)) {
    if (options.json) {
      const shown = error.issues.slice(0, MAX_JSON_ISSUES);
      output.json({ ok: false, issues: shown.map(issueJson), ...(error.issues.length > shown.length && { moreIssues: error.issues.length - shown.length }) });
    } else printIssues(error.issues, output);
    return EXIT.problems;
  }
  if (error instanceof UsageError) {
    output.err(`${color.red('error:')} ${error.message}`);
    output.err(`Run \`app-serving --help\` for usage.`);
    return EXIT.usage;
  }
  const message = error instanceof Error ? error.message : String(error);
  output.err(`${color.red('internal error:')} ${message}`);
  if (options.debug && error instanceof Error && error.stack) output.err(error.stack);
  output.err(`This is a bug in app-serving ${VERSION}; please report it at ${REPORT_URL} with the command you ran${options.debug ? ' and the trace above' : ' (add --debug for the stack trace)'}.`);
  return EXIT.internal;
}

/**
 * True for core's StackError. Checked by shape, so that this module (loaded for every command,
 * `--help` included) does not load core and its schema library.
 */
function isStackError(error: unknown): error is { issues: readonly Issue[] } {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'STACK_INVALID' && Array.isArray((error as { issues?: unknown }).issues);
}

/** Most problems printed one per line; the rest are counted ("… and 41,000 more"). */
export const MAX_PRINTED_ISSUES = 100;
/** Most problems in `--json` output (`moreIssues` counts the rest). */
export const MAX_JSON_ISSUES = 1000;
/** Longest problem message printed, in characters; longer ones end in "…". */
export const MAX_ISSUE_LENGTH = 500;

/**
 * Prints issues one per line, `<file>[:<line>]: <path>: <message>`, at most {@link MAX_PRINTED_ISSUES}
 * lines, then a count. A problem repeated in many models' files prints once, at its first file, with
 * a count and the first names (`… (in 50 models: M0, M1, M2 and 47 more)`); `--json` lists every one.
 */
export function printIssues(issues: readonly Issue[], output: Output): void {
  const lines = foldRepeated(issues);
  for (const line of lines.slice(0, MAX_PRINTED_ISSUES)) output.out(formatLine(line, output));
  if (lines.length > MAX_PRINTED_ISSUES) {
    const rest = lines.slice(MAX_PRINTED_ISSUES).reduce((sum, line) => sum + line.all.length, 0);
    output.out(`… and ${groupDigits(rest)} more`);
  }
  output.err(output.color.red(`${groupDigits(issues.length)} ${issues.length === 1 ? 'problem' : 'problems'}`));
}

function formatLine({ issue, ...line }: IssueLine, output: Output): string {
  const where = issue.file ? `${clip(issue.file, 200)}${issue.line ? `:${issue.line}` : ''}: ` : '';
  const path = issue.path ? `${output.color.bold(clip(issue.path, 200))}: ` : '';
  return `${output.color.dim(where)}${path}${clip(issue.message, MAX_ISSUE_LENGTH)}${repeatedSuffix({ issue, ...line })}`;
}

/** `text` redacted whole, then cut: a credential in a URL is never cut in two and half shown. */
function clip(text: string, length: number): string {
  const redacted = redactCredentials(text);
  return redacted.length > length ? `${redacted.slice(0, length - 1)}…` : redacted;
}

/** An issue as JSON (`line` only when known; `uses`, every model an issue about many concerns, only when set). */
export function issueJson(issue: Issue): Record<string, unknown> {
  return {
    code: issue.code,
    path: issue.path,
    message: clip(issue.message, MAX_ISSUE_LENGTH * 4),
    file: issue.file ?? null,
    ...(issue.line !== undefined && { line: issue.line }),
    ...(issue.uses !== undefined && { uses: issue.uses.map(({ model, where }) => ({ model, where })) }),
  };
}

type OnAction = (name: string, operands: string[], options: Record<string, unknown>) => Promise<void>;

function buildProgram(onAction: OnAction): Command {
  const program = new Command('app-serving')
    .description('Validate, plan, render, mirror and verify app-serving stacks: LLM inference on Kubernetes with llm-d or KServe.')
    .version(VERSION, '-V, --version', 'print the version')
    .option('--no-color', 'never colour the output (also: NO_COLOR=1)')
    .option('--debug', 'show stack traces of internal errors')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) });

  const stackOptions = (command: Command) =>
    command
      .option('-s, --stack <file>', 'the Pulumi stack file (default: apps/app-serving/Pulumi.example.yaml above the working directory)')
      .option('-m, --models-dir <dir>', 'the models folder (default: the first models/ above the stack file)')
      .option('--json', 'machine-readable output');

  const withArgs = (name: string) =>
    function (this: Command) {
      return onAction(name, this.args, this.opts());
    };

  stackOptions(program.command('validate').description('check the stack and every enabled model; print every problem, one per line')).action(withArgs('validate'));

  stackOptions(program.command('plan').description('show what would be deployed: names, charts, routes, storage and images per model')).action(withArgs('plan'));

  stackOptions(
    program
      .command('render')
      .description('run the real Pulumi components offline (no cluster, no Pulumi CLI) and print every resource they register')
      .option('-o, --out <dir>', 'write one file per resource into this folder'),
  ).action(withArgs('render'));

  stackOptions(
    program
      .command('diff')
      .description('what changes in the cluster between two revisions of the stack, offline: values, images, and what Pulumi would create, update, replace or delete')
      .option('--base <git-ref>', 'compare with the stack file and models folder at this git ref (e.g. origin/main)')
      .option('--head <git-ref>', 'the new revision at this git ref (default: the working tree)')
      .option('--base-stack <file>', 'compare with this stack file instead of a git ref')
      .option('--base-models-dir <dir>', 'the models folder of --base-stack (default: the first models/ above it)')
      .addOption(new Option('--format <format>', 'output format').choices(['text', 'markdown', 'json']).default('text'))
      .option('--exit-code', 'exit with 1 when there are changes, 0 when there are none (like git diff --exit-code)'),
  ).action(withArgs('diff'));

  stackOptions(
    program
      .command('images')
      .description('list every container image the stack pulls, with skopeo commands to mirror them into Harbor')
      .option('--mirror-to <registry/project>', 'mirror target (default: <harborHostname>/images-llm-d when the stack names Harbor)')
      .option('--archive-dir <dir>', 'go through oci-archive files in this folder (carry them across the air gap)'),
  ).action(withArgs('images'));

  program
    .command('new-model')
    .description('scaffold a model folder with values that validate, and print the stack snippet that enables it')
    .argument('<name>', 'the model folder name, e.g. Qwen3-8B')
    .addOption(new Option('-c, --category <category>', 'model category').choices(['generative', 'embedder']).makeOptionMandatory())
    .requiredOption('--slug <slug>', 'short name for Kubernetes objects: lower-case letters, digits, "-", at most 33')
    .addOption(new Option('-t, --template <template>', 'what serves the model').choices(['sim', 'vllm', 'infinity', 'kserve-vllm']))
    .option('--target <cluster>', 'a cluster variant: the folder becomes <name>-<target> and the slug <slug>-<target>')
    .option('--model-id <org/name>', 'the Hugging Face id of the model (default: the name)')
    .option('--size <params>', 'kserve-vllm: model size in billions of parameters, e.g. 7B (sets GPUs and memory)')
    .option('--mirror-to <registry/project>', 'use images mirrored under this registry/project (air-gapped clusters)')
    .option('--adapter <name=source>', 'a LoRA adapter served under its own name, into the stack snippet (repeat it): source an OCI reference, hf://<org>/<repo>[@<rev>] or path:<folder on the volume>', (value: string, previous: string[] = []) => [...previous, value])
    .option('--upstream <set>', 'the set of upstream versions the folders are for: 2026-08 (server-<slug>, router-<slug>) or 2026-02 (gaie-<slug>, ms-<slug>) (default: the set of --stack, else 2026-08)')
    .option('-s, --stack <file>', "the stack the model is for: its set of upstream versions, and its models folder")
    .option('-m, --models-dir <dir>', 'the models folder (default: the first models/ above the stack file, or the working directory)')
    .option('--json', 'machine-readable output')
    .action(withArgs('new-model'));

  stackOptions(
    program
      .command('migrate')
      .description('move a stack to the current set of upstream versions: app-serving:upstream in the stack file, and server-<slug>/router-<slug> values converted from each llm-d model\'s old ones (never overwrites a file)')
      .option('--to <set>', `the set to move to (${'2026-08'})`)
      .option('--model <name...>', 'move only these models (by their own upstream key), one at a time')
      .option('--dry-run', 'print what would be written, and write nothing'),
  ).action(withArgs('migrate'));

  stackOptions(
    program
      .command('verify')
      .description('smoke-test a deployed stack: pods ready, weights pulled, chat/completions/embeddings answer')
      .option('--kubeconfig <file>', 'kubeconfig to use (default: KUBECONFIG, ~/.kube/config, or in-cluster)')
      .option('--context <name>', 'kubeconfig context')
      .option('--base-url <url>', 'call this OpenAI-compatible endpoint directly (no cluster access)')
      .option('--endpoint-url <url>', "check the stack's endpoint at this URL (its base, without /v1), e.g. behind an ingress")
      .option('--no-endpoint', "leave the stack's endpoint out")
      .option('--model <name...>', 'verify only these models (folder names)')
      .option('--wait <duration>', 'keep retrying readiness until this long has passed, e.g. 10m')
      .option('--timeout <duration>', 'timeout of each check', '30s')
      .option('--deadline <duration>', 'deadline of the whole run', '15m')
      .option('--load <n>', 'after the checks, send n streaming chat requests per model (smoke-level latency probe)')
      .option('--concurrency <c>', 'concurrent requests of the load probe', '4')
      .option('--junit <file>', 'also write a JUnit XML report'),
  ).action(withArgs('verify'));

  stackOptions(
    program
      .command('preflight')
      .description('before pulumi up: is this cluster ready for the stack? CRDs, gateway classes, nodes, storage, namespaces, permissions (read-only)')
      .option('--kubeconfig <file>', 'kubeconfig to use (default: KUBECONFIG, ~/.kube/config, or in-cluster)')
      .option('--context <name>', 'kubeconfig context')
      .option('--timeout <duration>', 'timeout of each check', '10s')
      .option('--deadline <duration>', 'deadline of the whole run', '1m')
      .option('--junit <file>', 'also write a JUnit XML report'),
  ).action(withArgs('preflight'));

  return program;
}
