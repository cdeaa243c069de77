import { loadRenderer } from '../renderer.ts';
import { closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, unlinkSync, writeFileSync, type Dirent } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { displayPath } from '@app-serving/core';
import { loadAndPlan, type StackOptions } from '../context.ts';
import { EXIT, UsageError } from '../errors.ts';
import { checkWritableDir } from '../paths.ts';
import { checkTempDir } from '../temp.ts';
import type { Output } from '../output.ts';
import { printWarnings } from './validate.ts';

interface RenderOptions extends StackOptions {
  readonly json?: boolean;
  readonly out?: string;
}

/** One resource as `render --json` prints it (a contract: scripts depend on these fields). */
interface Resource {
  readonly type: string;
  readonly name: string;
  readonly parent: string | null;
  readonly dependsOn: readonly string[];
  readonly inputs: Record<string, unknown>;
}

/**
 * `app-serving render`: runs the real AppServing component under Pulumi's mocks (no cluster, no
 * Pulumi CLI, no network) and prints what `pulumi up` would register: a YAML manifest per plain
 * Kubernetes object, a chart spec per Helm chart; `--out` writes one file per resource.
 */
export default async function render({ options, output }: { options: RenderOptions; output: Output }): Promise<number> {
  if (options.out !== undefined) {
    // render creates the folder itself, not the folders above it (as mkdir without -p).
    const parent = dirname(resolve(options.out));
    if (!existsSync(parent)) throw new UsageError(`--out ${JSON.stringify(options.out)}: the folder ${parent} does not exist (render creates only the last folder)`);
    checkWritableDir('--out', options.out);
  }
  // Pulumi's runtime resolves the temporary folder when it loads: a missing one is the user's to fix.
  checkTempDir();
  const { plan } = loadAndPlan(options);
  // Pulumi is loaded only here: validate and plan never pay for it.
  const renderStack = await loadRenderer();
  const rendered = await renderStack(plan);
  const resources: Resource[] = rendered.resources.map(({ type, name, parent, dependsOn, inputs }) => ({ type, name, parent, dependsOn, inputs }));

  if (options.out !== undefined) {
    const dir = options.out;
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw new UsageError(`--out ${dir}: cannot create the folder (${(error as NodeJS.ErrnoException).code})`);
    }
    const replaced = clearEarlierRender(dir);
    const width = String(resources.length).length;
    resources.forEach((resource, index) => {
      const file = join(dir, `${String(index + 1).padStart(width, '0')}-${fileStem(resource)}.${options.json ? 'json' : 'yaml'}`);
      writeNewFile(dir, file, options.json ? `${JSON.stringify(resource, null, 2)}\n` : documentOf(resource));
    });
    output.err(`wrote ${resources.length} files to ${displayPath(dir)}${replaced > 0 ? ` (replacing the ${replaced} files of an earlier render)` : ''}`);
    return EXIT.ok;
  }
  if (options.json) {
    output.json({ resources });
    return EXIT.ok;
  }
  printWarnings(plan.warnings, output);
  output.out(resources.map(documentOf).join('---\n'));
  return EXIT.ok;
}

/** A file `render --out` writes: `<number>-<kind>-<name>.yaml|json`. */
const RENDERED_FILE = /^\d+-[a-z0-9._-]+\.(yaml|json)$/;

/**
 * Makes `dir` ready for a render: the files of an earlier render (named as render names them) are
 * removed — a link among them is removed itself, never followed — and anything else in the folder
 * stops the render (a usage error): render never mixes its files with others, nor keeps an earlier
 * render's files that the new one does not write. Returns how many files it removed.
 */
function clearEarlierRender(dir: string): number {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    throw new UsageError(`--out ${dir}: cannot read the folder (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const others = entries.filter((e) => !(RENDERED_FILE.test(e.name) && (e.isFile() || e.isSymbolicLink())));
  if (others.length > 0) {
    const names = others.slice(0, 3).map((e) => JSON.stringify(e.name)).join(', ');
    throw new UsageError(`--out ${dir}: the folder holds other files than an earlier render's (${names}${others.length > 3 ? `, and ${others.length - 3} more` : ''}): give an empty or new folder`);
  }
  for (const entry of entries) {
    try {
      unlinkSync(join(dir, entry.name));
    } catch (error) {
      throw new UsageError(`--out ${dir}: cannot remove ${entry.name} of an earlier render (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  }
  return entries.length;
}

/** Writes a file that must not exist yet, never through a link (a link put there meanwhile is an error, not followed). */
function writeNewFile(dir: string, file: string, text: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o644);
    writeFileSync(fd, text);
  } catch (error) {
    throw new UsageError(`--out ${dir}: cannot write ${displayPath(file)} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A YAML document for one resource: the manifest of a Kubernetes object, or a chart spec, or the component. */
function documentOf(resource: Resource): string {
  const header = `# ${resource.type} ${resource.name}${resource.dependsOn.length ? `\n# depends on: ${resource.dependsOn.map(shortUrn).join(', ')}` : ''}\n`;
  if (resource.type.startsWith('kubernetes:helm.sh/')) {
    const { chart, version, repositoryOpts, namespace, name, values } = resource.inputs as Record<string, unknown>;
    const repo = (repositoryOpts as { repo?: string } | undefined)?.repo;
    return `${header}${stringify({ chart, version, ...(repo && { repo }), release: name, namespace, values }, { lineWidth: 0 })}`;
  }
  if (resource.type.startsWith('kubernetes:')) return `${header}${stringify(withoutProviderFields(resource.inputs), { lineWidth: 0 })}`;
  return `${header}${stringify({ component: resource.type, name: resource.name, parent: resource.parent && shortUrn(resource.parent) }, { lineWidth: 0 })}`;
}

/** The Kubernetes object without the inputs the Pulumi SDK adds for itself. */
function withoutProviderFields(inputs: Record<string, unknown>): Record<string, unknown> {
  const { compat: _compat, ...manifest } = inputs;
  return manifest;
}

/** `urn:pulumi:stack::project::a$b$type::name` → `type::name`. */
function shortUrn(urn: string): string {
  const parts = urn.split('::');
  const type = parts.at(-2)?.split('$').at(-1) ?? '';
  return `${type}::${parts.at(-1)}`;
}

function fileStem(resource: Resource): string {
  const kind = resource.type.split(':').at(-1) ?? 'resource';
  // At most 200 characters: file names longer than 255 bytes cannot be created.
  return `${kind}-${resource.name}`.replace(/[^A-Za-z0-9._-]+/g, '_').toLowerCase().slice(0, 200);
}
