import type { DeploymentDiff, ModelDiff, ResourceChange, ValueChange } from '@app-serving/core';
import { redactCredentials, type Colors } from '../output.ts';
import type { SideInfo } from './diff.ts';

/** The two sides, as the output names them. */
export interface DiffHeader {
  readonly base: SideInfo;
  readonly head: SideInfo;
}

/** Longest value shown in a line; longer ones are cut with "…" (the JSON has them whole). */
const MAX_VALUE = 80;
/** Field changes shown per resource in text and markdown; the JSON has them all. */
const MAX_FIELDS = 12;

const SIGN = { create: '+', update: '~', replace: '±', delete: '-' } as const;
const MODEL_SIGN = { added: '+', removed: '-', changed: '~' } as const;
const CHANGE_SIGN = { added: '+', removed: '-', changed: '~' } as const;

/** `main (3f2a1c0)`, `working tree`, a file. */
export function sideName(side: SideInfo): string {
  if (side.ref !== null) return `${side.ref}${side.commit ? ` (${side.commit.slice(0, 7)})` : ''}`;
  return side.stack;
}

function sideLabel(side: SideInfo, other: SideInfo): string {
  if (side.ref !== null) return sideName(side);
  return other.ref !== null && side.stack === other.stack.slice(other.ref.length + 1) ? 'working tree' : side.stack;
}

/** `"a:v1"`, redacted whole (credentials in URLs), then cut to {@link MAX_VALUE}. */
export function showValue(value: unknown): string {
  const text = value === undefined ? 'unset' : redactCredentials(JSON.stringify(value));
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

function showChange(change: ValueChange): string {
  if (change.secret) return `${change.path}: ${change.change} (secret, not shown)`;
  if (change.change === 'added') return `${change.path}: ${showValue(change.new)}`;
  if (change.change === 'removed') return `${change.path}: ${showValue(change.old)}`;
  return `${change.path}: ${showValue(change.old)} → ${showValue(change.new)}`;
}

/** `1 to create, 2 to update, 1 to replace, 0 to delete (3 models unchanged)`. */
export function summaryLine(diff: DeploymentDiff): string {
  const { create, update, replace, delete: del } = diff.summary;
  return `${create} to create, ${update} to update, ${replace} to replace, ${del} to delete${unchanged(diff)}`;
}

function unchanged(diff: DeploymentDiff): string {
  const n = diff.summary.unchangedModels;
  return n === 0 ? '' : ` (${n} ${n === 1 ? 'model' : 'models'} unchanged)`;
}

/** The diff for a terminal: one block per model, then the stack, the warnings and the summary. */
export function formatText(diff: DeploymentDiff, header: DiffHeader, color: Colors): string {
  const lines: string[] = [];
  const base = sideLabel(header.base, header.head);
  const head = sideLabel(header.head, header.base);
  lines.push(color.bold(`app-serving diff: ${base} → ${head}`));
  if (!header.base.exists) lines.push(`(${header.base.stack} does not exist: every model is new)`);
  if (!header.head.exists) lines.push(`(${header.head.stack} does not exist: every model is removed)`);
  if (!diff.changed) {
    lines.push('', 'No changes: both revisions deploy the same resources.');
    return lines.join('\n');
  }
  const paint = { create: color.green, update: color.yellow, replace: color.magenta, delete: color.red } as const;
  const resource = (r: ResourceChange, indent: string) => {
    lines.push(`${indent}${paint[r.action](`${SIGN[r.action]} ${r.action.padEnd(7)}`)} ${r.object}`);
    for (const reason of r.reasons) lines.push(`${indent}    because ${reason}`);
    if (r.deleteBeforeReplace) lines.push(`${indent}    (the old one is deleted before the new one is created)`);
    for (const note of r.notes) lines.push(`${indent}    note: ${note}`);
    for (const change of r.changes.slice(0, MAX_FIELDS)) lines.push(`${indent}    ${CHANGE_SIGN[change.change]} ${showChange(change)}`);
    if (r.changes.length > MAX_FIELDS) lines.push(`${indent}    … ${r.changes.length - MAX_FIELDS} more (--json has them all)`);
  };
  for (const model of diff.models) {
    lines.push('');
    const sign = { added: color.green, removed: color.red, changed: color.yellow }[model.status](MODEL_SIGN[model.status]);
    lines.push(`${sign} ${color.bold(model.name)}  ${model.category}, ${model.platform}, namespace ${model.namespace} · ${model.status}${model.status === 'changed' ? '' : `: ${counts(model)}`}`);
    for (const release of model.releases) {
      lines.push(`    values of ${release.release} (${release.chart}):`);
      for (const change of release.changes) lines.push(`      ${CHANGE_SIGN[change.change]} ${showChange(change)}`);
    }
    const images = imageLines(model);
    if (images.length > 0) lines.push(`    images:`, ...images.map((l) => `      ${l}`));
    if (model.status === 'changed') for (const r of model.resources) resource(r, '    ');
  }
  if (diff.stack.resources.length > 0 || diff.stack.secrets.length > 0) {
    lines.push('', color.bold('stack'));
    for (const r of diff.stack.resources) resource(r, '    ');
    for (const s of diff.stack.secrets) lines.push(`    ${CHANGE_SIGN[s.change]} ${s.key}: ${s.change} (secret, not shown)`);
  }
  if (diff.warnings.length > 0) lines.push('');
  for (const w of diff.warnings) lines.push(`${color.yellow('warning:')} ${w.model ? `${w.model}: ` : ''}${w.message}`);
  lines.push('', color.bold(`Pulumi would: ${summaryLine(diff)}`));
  return lines.join('\n');
}

function counts(model: ModelDiff): string {
  const by = (action: ResourceChange['action']) => model.resources.filter((r) => r.action === action).length;
  const parts = (['create', 'update', 'replace', 'delete'] as const).filter((a) => by(a) > 0).map((a) => `${by(a)} to ${a}`);
  return parts.length ? parts.join(', ') : 'no resource changes';
}

function imageLines(model: ModelDiff): string[] {
  return [
    ...model.images.changed.map((c) => `~ ${c.old} → ${c.new}`),
    ...model.images.added.map((i) => `+ ${i}`),
    ...model.images.removed.map((i) => `- ${i}`),
  ];
}

// Markdown -----------------------------------------------------------------------------------

/** Inline code that holds any text: a fence longer than any run of backticks inside, pipes escaped for tables. */
export function code(text: string): string {
  const clean = text.replace(/[\r\n]+/g, ' ');
  const longest = Math.max(0, ...[...clean.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = clean.startsWith('`') || clean.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${clean.replace(/\|/g, '\\|')}${pad}${fence}`;
}

/** Text for a table cell or a list item: markdown and HTML characters escaped. */
function md(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/([\\`*_[\]<>|#~])/g, '\\$1');
}

/**
 * Prose for a list item: its `…` spans as inline code (a warning's `app-serving images`), the rest
 * escaped as {@link md} does — an escaped backtick would show on GitHub as a literal one.
 */
export function prose(text: string): string {
  return text
    .split(/(`[^`\r\n]+`)/)
    .map((part, i) => (i % 2 === 1 ? code(part.slice(1, -1)) : md(part)))
    .join('');
}

/**
 * The diff for a pull-request comment: a summary line, one table row per model, the warnings, and
 * the values and replaced resources in a collapsed section.
 */
export function formatMarkdown(diff: DeploymentDiff, header: DiffHeader): string {
  const out: string[] = [];
  const base = sideLabel(header.base, header.head);
  const head = sideLabel(header.head, header.base);
  out.push(`### app-serving diff: ${code(base)} → ${code(head)}`, '');
  if (!diff.changed) {
    out.push('No changes: both revisions deploy the same resources.');
    return out.join('\n');
  }
  const { create, update, replace, delete: del } = diff.summary;
  out.push(`**Pulumi would: ${create} to create · ${update} to update · ${replace} to replace · ${del} to delete**${unchanged(diff)}`, '');
  if (diff.models.length > 0) {
    out.push('| model | change | create | update | replace | delete | images |', '|---|---|--:|--:|--:|--:|---|');
    for (const model of diff.models) {
      const by = (action: ResourceChange['action']) => model.resources.filter((r) => r.action === action).length;
      const images = [
        ...model.images.changed.map((c) => `${code(c.old)} → ${code(c.new)}`),
        ...model.images.added.map((i) => `+ ${code(i)}`),
        ...model.images.removed.map((i) => `− ${code(i)}`),
      ].join('<br>');
      out.push(`| ${md(model.name)} | ${model.status} | ${by('create')} | ${by('update')} | ${by('replace')} | ${by('delete')} | ${images} |`);
    }
    out.push('');
  }
  if (diff.warnings.length > 0) {
    out.push('> [!WARNING]');
    for (const w of diff.warnings) out.push(`> - ${w.model ? `**${md(w.model)}**: ` : ''}${prose(w.message)}`);
    out.push('');
  }
  const details: string[] = [];
  for (const model of diff.models) {
    const replaced = model.resources.filter((r) => r.action === 'replace');
    const updated = model.status === 'changed' ? model.resources.filter((r) => r.action === 'update' && r.changes.length > 0) : [];
    if (model.releases.length === 0 && replaced.length === 0 && updated.length === 0) continue;
    details.push(`#### ${md(model.name)}`, '');
    for (const release of model.releases) {
      details.push(`Values of ${code(release.release)} (${md(release.chart)}):`, '', '| key | old | new |', '|---|---|---|');
      for (const c of release.changes) details.push(changeRow(c));
      details.push('');
    }
    for (const r of [...replaced, ...updated]) {
      details.push(`- **${r.action}** ${code(r.object)}${r.reasons.length ? `: ${r.reasons.map(prose).join('; ')}` : ''}${r.deleteBeforeReplace ? ' (deleted before it is created again)' : ''}`);
      for (const c of r.changes.slice(0, MAX_FIELDS)) details.push(`  - ${code(c.path)}: ${cell(c, 'old')} → ${cell(c, 'new')}`);
      if (r.changes.length > MAX_FIELDS) details.push(`  - … ${r.changes.length - MAX_FIELDS} more`);
    }
    details.push('');
  }
  if (diff.stack.resources.length > 0 || diff.stack.secrets.length > 0) {
    details.push('#### stack', '');
    for (const r of diff.stack.resources) details.push(`- **${r.action}** ${code(r.object)}${r.reasons.length ? `: ${r.reasons.map(prose).join('; ')}` : ''}`);
    for (const s of diff.stack.secrets) details.push(`- secret ${code(s.key)}: ${s.change} (not shown)`);
    details.push('');
  }
  if (details.length > 0) out.push('<details><summary>Values and fields</summary>', '', ...details, '</details>', '');
  out.push(`<sub>${md(header.base.stack)} → ${md(header.head.stack)} · offline: computed by \`app-serving diff\` from the plan and Pulumi's mocks; charts' own templates are not rendered</sub>`);
  return out.join('\n');
}

function cell(change: ValueChange, side: 'old' | 'new'): string {
  if (change.secret) return '*(secret)*';
  const value = change[side];
  return value === undefined ? '—' : code(showValue(value));
}

function changeRow(change: ValueChange): string {
  return `| ${code(change.path)} | ${cell(change, 'old')} | ${cell(change, 'new')} |`;
}
